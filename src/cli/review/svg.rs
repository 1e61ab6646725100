//! The list view's picture: how badness is spread over every neighborhood of the store, as an
//! inline SVG histogram (server-rendered, no script), with the threshold line and a marker
//! under the axis for each neighborhood listed on the page. Bar heights are on a log scale
//! (most neighborhoods of a crawl copy nothing, and the few that copy would be invisible
//! beside them on a linear one); every non-empty bar has its count written above it.

use std::fmt::Write;

use super::html::esc;

/// Bins over badness [0, 1] (0.05 each: wide enough for a six-digit count above each bar).
pub const BINS: usize = 20;

/// Drawing size and margins, in SVG user units (pixels at 100 %).
const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 210.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = 58.0;

/// Badness counted into [`BINS`] equal bins over [0, 1].
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub counts: [u64; BINS],
    /// How many neighborhoods are above the threshold (they need not fill whole bins).
    pub above: u64,
    pub threshold: f64,
}

/// A badness value as drawn: non-finite values as 0, the rest clamped into [0, 1].
fn clamp(b: f64) -> f64 {
    if b.is_finite() {
        b.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

impl Histogram {
    /// Count every badness (each in exactly one bin, so the bars sum to `badness.len()`).
    pub fn new(badness: impl IntoIterator<Item = f64>, threshold: f64) -> Histogram {
        let mut counts = [0u64; BINS];
        let mut above = 0;
        for b in badness {
            if b > threshold {
                above += 1;
            }
            counts[Self::bin(b)] += 1;
        }
        Histogram { counts, above, threshold }
    }

    /// The bin of a badness value (1.0 falls in the last bin).
    pub fn bin(b: f64) -> usize {
        ((clamp(b) * BINS as f64) as usize).min(BINS - 1)
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The x coordinate of a badness value on the drawing.
    pub fn x_of(b: f64) -> f64 {
        LEFT + clamp(b) * (WIDTH - LEFT - RIGHT)
    }

    /// Bar height for a count: log scale, the largest count fills the plot.
    fn height(&self, c: u64) -> f64 {
        let max = self.counts.iter().copied().max().unwrap_or(0);
        if c == 0 || max == 0 {
            return 0.0;
        }
        let plot = HEIGHT - TOP - BOTTOM;
        // A count of 1 still shows (at least 2 px).
        ((1.0 + c as f64).log10() / (1.0 + max as f64).log10() * plot).max(2.0)
    }

    /// The SVG. `listed`: (badness, row number, neighborhood name) of the neighborhoods
    /// listed on the page, each marked with a triangle under the axis (its name in a
    /// `<title>`, escaped like all page text).
    pub fn svg(&self, listed: &[(f64, usize, &str)]) -> String {
        let mut s = String::with_capacity(8 * 1024);
        let total = self.total();
        let base = HEIGHT - BOTTOM;
        let _ = write!(
            s,
            "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
             viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-labelledby=\"hist-title\">\
             <title id=\"hist-title\">Badness of all {total} neighborhoods: {} above the threshold {:.4}</title>",
            self.above, self.threshold
        );
        // Y axis: ticks at powers of ten up to the largest count.
        let max = self.counts.iter().copied().max().unwrap_or(0);
        let mut tick = 1u64;
        while tick <= max.max(1) {
            let y = base - self.height(tick);
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
                 <text class=\"ylab\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{tick}</text>",
                WIDTH - RIGHT,
                LEFT - 4.0,
                y + 3.0
            );
            match tick.checked_mul(10) {
                Some(t) => tick = t,
                None => break,
            }
        }
        // Bars: grey at or below the threshold, red above it, amber where a bin holds both.
        let bin_w = (WIDTH - LEFT - RIGHT) / BINS as f64;
        for (i, &c) in self.counts.iter().enumerate() {
            let (lo, hi) = (i as f64 / BINS as f64, (i + 1) as f64 / BINS as f64);
            let class = if lo >= self.threshold {
                "bar above"
            } else if hi > self.threshold {
                "bar mixed"
            } else {
                "bar"
            };
            let h = self.height(c);
            let x = LEFT + i as f64 * bin_w;
            let _ = write!(
                s,
                "<rect class=\"{class}\" data-count=\"{c}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\">\
                 <title>badness {lo:.2}–{hi:.2}: {c} neighborhoods</title></rect>",
                x + 1.0,
                base - h,
                bin_w - 2.0
            );
            if c > 0 {
                let _ = write!(
                    s,
                    "<text class=\"count\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{c}</text>",
                    x + bin_w / 2.0,
                    base - h - 3.0
                );
            }
        }
        // X axis with ticks every 0.1.
        let _ = write!(
            s,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{base}\" y2=\"{base}\"/>",
            WIDTH - RIGHT
        );
        for k in 0..=10 {
            let v = k as f64 / 10.0;
            let x = Self::x_of(v);
            let _ = write!(
                s,
                "<line class=\"axis\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{base}\" y2=\"{:.1}\"/>\
                 <text class=\"xlab\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v:.1}</text>",
                base + 4.0,
                base + 26.0
            );
        }
        let _ = write!(
            s,
            "<text class=\"axlab\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">badness (mean share of a page's \
             chunks found in the label set)</text>\
             <text class=\"axlab\" x=\"12\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1})\">\
             neighborhoods (log)</text>",
            (LEFT + WIDTH - RIGHT) / 2.0,
            HEIGHT - 6.0,
            (TOP + base) / 2.0,
            (TOP + base) / 2.0
        );
        // Where the listed neighborhoods sit: a triangle under the axis each.
        for &(b, row, name) in listed {
            let x = Self::x_of(b);
            let _ = write!(
                s,
                "<path class=\"listed\" data-x=\"{x:.1}\" d=\"M{x:.1} {:.1} l-4 7 h8 z\"><title>#{row} {} — badness {b:.4}</title></path>",
                base + 5.0,
                esc(name)
            );
        }
        // The threshold, drawn last so it stays on top of the bars.
        let tx = Self::x_of(self.threshold);
        let _ = write!(
            s,
            "<line class=\"threshold\" x1=\"{tx:.1}\" x2=\"{tx:.1}\" y1=\"{:.1}\" y2=\"{base}\"/>\
             <text class=\"thlab\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{}\">threshold {:.4} · {} above</text></svg>",
            TOP - 8.0,
            if tx > WIDTH / 2.0 { tx - 4.0 } else { tx + 4.0 },
            TOP - 10.0 + 8.0,
            if tx > WIDTH / 2.0 { "end" } else { "start" },
            self.threshold,
            self.above
        );
        s
    }
}

/// The histogram's styles (in the page's nonce'd style sheet: the CSP allows no inline style).
pub const STYLE: &str = "svg.hist{display:block;max-width:100%;height:auto;margin:6px 0 2px}\
svg.hist .bar{fill:#b0bec5}svg.hist .bar.mixed{fill:#ffb74d}svg.hist .bar.above{fill:#e53935}\
svg.hist .grid{stroke:#eceff1}svg.hist .axis{stroke:#546e7a}svg.hist .threshold{stroke:#b00020;stroke-width:2;stroke-dasharray:5 3}\
svg.hist text{font:11px system-ui,sans-serif;fill:#37474f}svg.hist .count{font-size:10px}svg.hist .thlab{fill:#b00020;font-weight:bold}\
svg.hist .listed{fill:#1565c0;fill-opacity:.75}svg.hist .axlab{fill:#607d8b}\
.histkey{font-size:12px;color:#555;margin:0 0 8px}.histkey .k{display:inline-block;width:10px;height:10px;margin:0 3px 0 10px}\
.histkey .k.above{background:#e53935}.histkey .k.mixed{background:#ffb74d}.histkey .k.bar{background:#b0bec5}\
.histkey .k.listed{background:#1565c0}";

#[cfg(test)]
mod tests {
    use super::*;

    /// (class, data-count) of every bar, in order.
    fn bars(svg: &str) -> Vec<(String, u64)> {
        svg.split("<rect class=\"")
            .skip(1)
            .map(|r| {
                let class = r.split('"').next().unwrap().to_string();
                let n = r.split("data-count=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
                (class, n)
            })
            .collect()
    }

    fn attr(svg: &str, after: &str, name: &str) -> f64 {
        let at = svg.find(after).unwrap_or_else(|| panic!("no {after} in {svg}"));
        let rest = &svg[at..];
        rest.split(&format!("{name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
    }

    #[test]
    fn bars_sum_to_every_neighborhood_and_bins_are_right() {
        let badness = [0.0, 0.0, 0.0, 0.01, 0.049, 0.05, 0.5, 0.74, 0.99, 1.0, 1.5, -0.2, f64::NAN];
        let h = Histogram::new(badness, 0.5);
        let svg = h.svg(&[]);
        let b = bars(&svg);
        assert_eq!(b.len(), BINS);
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), badness.len() as u64);
        // 0, 0, 0, 0.01, 0.049, -0.2 (clamped), NaN (as 0) in the first bin; 0.05 in the second.
        assert_eq!(b[0].1, 7);
        assert_eq!(b[1].1, 1);
        assert_eq!(b[10].1, 1); // 0.5
        assert_eq!(b[14].1, 1); // 0.74
        assert_eq!(b[19].1, 3); // 0.99, 1.0, 1.5
                                // Above 0.5: 0.74, 0.99, 1.0, 1.5 (0.5 itself is not above).
        assert_eq!(h.above, 4);
        // Bars from the threshold's bin on are red, the ones before grey.
        assert_eq!(b[9].0, "bar");
        assert_eq!(b[10].0, "bar above");
        let counts: Vec<&str> = svg.split("<text class=\"count\"").skip(1).collect();
        assert_eq!(counts.len(), b.iter().filter(|x| x.1 > 0).count(), "a count over every non-empty bar");
    }

    #[test]
    fn threshold_line_sits_at_its_badness() {
        for t in [0.0, 0.1234, 0.63, 1.0] {
            let svg = Histogram::new([0.2, 0.7], t).svg(&[]);
            let x = attr(&svg, "<line class=\"threshold\"", "x1");
            assert!((x - Histogram::x_of(t)).abs() < 0.06, "{t}: {x}");
            assert!(svg.contains(&format!("threshold {t:.4}")));
        }
        // x grows with badness and spans the plot.
        assert_eq!(Histogram::x_of(0.0), LEFT);
        assert_eq!(Histogram::x_of(1.0), WIDTH - RIGHT);
        let t = 0.37;
        let svg = Histogram::new([0.2, 0.36, 0.38], t).svg(&[]);
        let b = bars(&svg);
        assert_eq!(b[7].0, "bar mixed", "the bin 0.35–0.40 holds the threshold");
    }

    #[test]
    fn listed_neighborhoods_are_marked_where_they_sit_and_escaped() {
        let listed = [(0.9, 1, "http://a.test/"), (0.75, 2, "http://b.test/<script>alert(1)</script>\u{7}")];
        let svg = Histogram::new([0.1, 0.1, 0.75, 0.9], 0.5).svg(&listed);
        let marks: Vec<&str> = svg.split("<path class=\"listed\"").skip(1).collect();
        assert_eq!(marks.len(), 2);
        for (m, (b, row, _)) in marks.iter().zip(listed) {
            let x: f64 = m.split("data-x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
            assert!((x - Histogram::x_of(b)).abs() < 0.06);
            assert!(m.contains(&format!("<title>#{row} ")));
        }
        assert!(!svg.contains("<script"), "{svg}");
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;\u{FFFD}"));
        assert!(!svg.contains('\u{7}'));
    }

    #[test]
    fn empty_store_draws_an_empty_histogram() {
        let h = Histogram::new(std::iter::empty(), 0.0);
        let svg = h.svg(&[]);
        assert_eq!(h.total(), 0);
        assert!(bars(&svg).iter().all(|b| b.1 == 0));
        assert!(svg.ends_with("</svg>"));
    }
}
