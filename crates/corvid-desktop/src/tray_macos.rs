//! The macOS tray: an NSStatusItem through `tray-icon` (its menu through `muda`), on AppKit's
//! event loop (`tao`) on the main thread, as AppKit requires. The app runs on a thread of its
//! own; views and menu picks cross over as the loop's user events. An agent app: no Dock icon
//! and no window (`ActivationPolicy::Accessory`, the `LSUIElement` of the bundle).
//!
//! Written for macOS and checked with `cargo check --target x86_64-apple-darwin`; not run here
//! (no macOS machine): see the crate's README.

use std::collections::HashMap;

use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};
use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
use tokio::sync::mpsc;
use tray_icon::menu::{CheckMenuItem, Menu, MenuEvent, MenuId, MenuItem, PredefinedMenuItem};
use tray_icon::{Icon, TrayIcon, TrayIconBuilder};

use crate::app::{Launch, Tray};
use crate::view::{Action, Entry, Health, Level, TrayView};

/// What reaches the main thread's loop.
enum UiEvent {
    Show(TrayView),
    Menu(MenuEvent),
    /// The app has stopped: exit with this code.
    Exit(i32),
}

struct MacTray(EventLoopProxy<UiEvent>);

impl Tray for MacTray {
    async fn show(&mut self, view: &TrayView) {
        let _ = self.0.send_event(UiEvent::Show(view.clone()));
    }

    async fn close(self) {}
}

/// Runs AppKit's loop on this (the main) thread and the app on another; never returns: the
/// process exits when the app has stopped.
pub(crate) fn run(runtime: &tokio::runtime::Runtime, launch: Launch) -> anyhow::Result<()> {
    let mut event_loop = EventLoopBuilder::<UiEvent>::with_user_event().build();
    event_loop.set_activation_policy(ActivationPolicy::Accessory);
    let proxy = event_loop.create_proxy();
    let menu_proxy = proxy.clone();
    MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
        let _ = menu_proxy.send_event(UiEvent::Menu(event));
    }));
    let (actions, picked) = mpsc::unbounded_channel();
    let handle = runtime.handle().clone();
    let exit_proxy = proxy.clone();
    std::thread::Builder::new()
        .name("corvid-app".to_owned())
        .spawn(move || {
            let code = match handle.block_on(crate::app::run(launch, MacTray(proxy), picked)) {
                Ok(()) => 0,
                Err(error) => {
                    eprintln!("corvid-desktop: {error:#}");
                    1
                }
            };
            let _ = exit_proxy.send_event(UiEvent::Exit(code));
        })?;
    let mut tray: Option<TrayIcon> = None;
    let mut menu_actions: HashMap<MenuId, Action> = HashMap::new();
    event_loop.run(move |event, _, control_flow| {
        *control_flow = ControlFlow::Wait;
        match event {
            // The status item is made once the loop runs, as AppKit wants.
            Event::NewEvents(StartCause::Init) => {
                let view = Health::starting().view();
                let (menu, ids) = menu(&view);
                menu_actions = ids;
                let mut builder = TrayIconBuilder::new()
                    .with_menu(Box::new(menu))
                    .with_tooltip(&view.tooltip);
                if let Some(icon) = icon(view.level) {
                    builder = builder.with_icon(icon);
                }
                match builder.build() {
                    Ok(icon) => tray = Some(icon),
                    Err(error) => tracing::warn!(%error, "no status item: corvid keeps serving"),
                }
            }
            Event::UserEvent(UiEvent::Show(view)) => {
                if let Some(tray) = &tray {
                    let (menu, ids) = menu(&view);
                    menu_actions = ids;
                    tray.set_menu(Some(Box::new(menu)));
                    tray.set_icon(icon(view.level)).ok();
                    tray.set_tooltip(Some(&view.tooltip)).ok();
                    // Words beside the icon only when something is wrong.
                    let title = (view.level != Level::Ok).then_some(view.title.as_str());
                    tray.set_title(title);
                }
            }
            Event::UserEvent(UiEvent::Menu(event)) => {
                if let Some(action) = menu_actions.get(event.id()) {
                    let _ = actions.send(*action);
                }
            }
            Event::UserEvent(UiEvent::Exit(code)) => {
                tray.take();
                *control_flow = ControlFlow::ExitWithCode(code);
            }
            _ => {}
        }
    })
}

/// The menu for `view`, and which action each item's id stands for.
fn menu(view: &TrayView) -> (Menu, HashMap<MenuId, Action>) {
    let menu = Menu::new();
    let mut actions = HashMap::new();
    for entry in &view.entries {
        let appended = match entry {
            Entry::Info(text) => menu.append(&MenuItem::new(text, false, None)),
            Entry::Separator => menu.append(&PredefinedMenuItem::separator()),
            Entry::Item {
                action,
                label,
                enabled,
                checked: None,
            } => {
                let item = MenuItem::new(label, *enabled, None);
                actions.insert(item.id().clone(), *action);
                menu.append(&item)
            }
            Entry::Item {
                action,
                label,
                enabled,
                checked: Some(checked),
            } => {
                let item = CheckMenuItem::new(label, *enabled, *checked, None);
                actions.insert(item.id().clone(), *action);
                menu.append(&item)
            }
        };
        if let Err(error) = appended {
            tracing::warn!(%error, "cannot build the tray menu");
        }
    }
    (menu, actions)
}

/// The state's icon (`None` only if the pixels did not fit the size, which they are made for).
fn icon(level: Level) -> Option<Icon> {
    let side = crate::icon::SIZE;
    Icon::from_rgba(crate::icon::rgba(level), side, side).ok()
}
