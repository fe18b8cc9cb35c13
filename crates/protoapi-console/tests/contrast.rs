//! The console's and the API reference's colours are readable in both
//! colour schemes: text, links, danger text and button labels against their
//! backgrounds reach WCAG's 4.5:1 for normal text. The colours are the
//! stylesheets' own (`--page`, `--text`, `--accent`, `--danger`,
//! `--on-accent`), light in `:root` and dark in the
//! `prefers-color-scheme: dark` block.

use std::collections::BTreeMap;

const CONSOLE: &str = include_str!("../assets/console.css");
const REFERENCE: &str = include_str!("../assets/docs.css");

/// The custom properties `#rrggbb` declared in `block`.
fn colours(block: &str) -> BTreeMap<String, [f64; 3]> {
    let mut colours = BTreeMap::new();
    for declaration in block.split([';', '{', '}']) {
        let Some((name, value)) = declaration.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        let Some(hex) = value.strip_prefix('#').filter(|hex| hex.len() == 6) else {
            continue;
        };
        if !name.starts_with("--") {
            continue;
        }
        let channel = |at: usize| f64::from(u8::from_str_radix(&hex[at..at + 2], 16).unwrap());
        colours.insert(name.to_owned(), [channel(0), channel(2), channel(4)]);
    }
    colours
}

/// The light scheme (the first `:root` block) and the dark one (the
/// `:root` inside the dark media query, over the light one).
fn schemes(css: &str) -> [BTreeMap<String, [f64; 3]>; 2] {
    let light_end = css.find('}').expect("a :root block");
    let light = colours(&css[..light_end]);
    let dark_start = css
        .find("prefers-color-scheme: dark")
        .expect("a dark scheme");
    let dark_block = &css[dark_start..];
    let dark_end = dark_block.find('}').expect("the dark :root block ends");
    let mut dark = light.clone();
    dark.extend(colours(&dark_block[..dark_end]));
    [light, dark]
}

fn luminance([r, g, b]: [f64; 3]) -> f64 {
    let linear = |c: f64| {
        let c = c / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
}

fn contrast(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (a, b) = (luminance(a), luminance(b));
    (a.max(b) + 0.05) / (a.min(b) + 0.05)
}

fn check(css: &str, pairs: &[(&str, &str)]) {
    for (scheme, colours) in ["light", "dark"].into_iter().zip(schemes(css)) {
        for (foreground, background) in pairs {
            let ratio = contrast(colours[*foreground], colours[*background]);
            assert!(
                ratio >= 4.5,
                "{scheme}: {foreground} on {background} is {ratio:.2}:1"
            );
        }
    }
}

#[test]
fn the_console_is_readable_in_both_schemes() {
    check(
        CONSOLE,
        &[
            ("--text", "--page"),
            ("--accent", "--page"),
            ("--danger", "--page"),
            ("--on-accent", "--accent"),
            ("--on-accent", "--danger"),
        ],
    );
}

#[test]
fn the_api_reference_is_readable_in_both_schemes() {
    check(REFERENCE, &[("--text", "--page"), ("--accent", "--page")]);
}

#[test]
fn the_old_dark_accent_would_be_refused() {
    // The accent the console had in both schemes: 3.08:1 on a dark page.
    let ratio = contrast([31.0, 95.0, 191.0], [18.0, 18.0, 18.0]);
    assert!(ratio < 4.5, "{ratio}");
}
