//! Platforms with neither a StatusNotifierItem nor an NSStatusItem: no tray. The app serves as
//! `corvid serve` does and stops on Ctrl-C; it says so once.

use tokio::sync::mpsc;

use crate::app::{Launch, Tray};
use crate::view::TrayView;

struct NoTray;

impl Tray for NoTray {
    async fn show(&mut self, _view: &TrayView) {}
    async fn close(self) {}
}

pub(crate) fn run(runtime: &tokio::runtime::Runtime, launch: Launch) -> anyhow::Result<()> {
    tracing::warn!("the tray is not available on this platform: stop corvid with Ctrl-C");
    let (_actions, picked) = mpsc::unbounded_channel();
    runtime.block_on(crate::app::run(launch, NoTray, picked))
}
