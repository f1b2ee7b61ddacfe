//! The tray icon, drawn here rather than shipped as files: a filled disc whose colour says the
//! state (green running, amber a provider fails, red down), on a transparent square.

use crate::view::Level;

/// The icon's side, in pixels (trays scale it).
pub(crate) const SIZE: u32 = 32;

fn colour(level: Level) -> [u8; 3] {
    match level {
        Level::Ok => [0x2e, 0xa0, 0x43],
        Level::Warning => [0xe3, 0x9b, 0x16],
        Level::Down => [0xd1, 0x24, 0x2f],
    }
}

/// The icon as RGBA rows, `SIZE` × `SIZE`, with a soft edge.
pub(crate) fn rgba(level: Level) -> Vec<u8> {
    let [red, green, blue] = colour(level);
    let centre = f64::from(SIZE) / 2.0;
    let radius = centre - 2.0;
    let mut pixels = Vec::with_capacity((SIZE * SIZE * 4) as usize);
    for y in 0..SIZE {
        for x in 0..SIZE {
            let dx = f64::from(x) + 0.5 - centre;
            let dy = f64::from(y) + 0.5 - centre;
            let distance = (dx * dx + dy * dy).sqrt();
            // Full inside the disc, fading over one pixel at its edge.
            let coverage = (radius + 0.5 - distance).clamp(0.0, 1.0);
            // In 0..=255 by the clamp above.
            let alpha = (coverage * 255.0).round() as u8;
            pixels.extend_from_slice(&[red, green, blue, alpha]);
        }
    }
    pixels
}

/// The same pixels as ARGB32 in network byte order (the StatusNotifierItem's `IconPixmap`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn argb(level: Level) -> Vec<u8> {
    rgba(level)
        .chunks_exact(4)
        .flat_map(|pixel| [pixel[3], pixel[0], pixel[1], pixel[2]])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixel(pixels: &[u8], x: u32, y: u32) -> &[u8] {
        let at = ((y * SIZE + x) * 4) as usize;
        &pixels[at..at + 4]
    }

    #[test]
    fn each_level_is_a_disc_of_its_own_colour_on_transparency() {
        let ok = rgba(Level::Ok);
        assert_eq!(ok.len(), (SIZE * SIZE * 4) as usize);
        assert_eq!(pixel(&ok, SIZE / 2, SIZE / 2), [0x2e, 0xa0, 0x43, 255]);
        assert_eq!(pixel(&ok, 0, 0)[3], 0);
        assert_ne!(rgba(Level::Warning), ok);
        assert_ne!(rgba(Level::Down), rgba(Level::Warning));
    }

    #[test]
    fn argb_puts_alpha_first() {
        let argb = argb(Level::Down);
        let at = (((SIZE / 2) * SIZE + SIZE / 2) * 4) as usize;
        assert_eq!(&argb[at..at + 4], [255, 0xd1, 0x24, 0x2f]);
    }
}
