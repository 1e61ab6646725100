//! The built-in web of `ditto demo`: real Wikipedia text, known copies of it, original
//! prose, a crawler trap and a throttling host, all under `.demo.test`.
//!
//! | host | what it is | what `ditto demo` should find |
//! | --- | --- | --- |
//! | `wiki.demo.test` | the bundled articles (`demo/wikipedia/`, see its `ATTRIBUTION.md`), one page each at `/wiki/<Title>`, an index at `/` linking all of them and `http://blog.demo.test/`; every article page shows a visible CC BY-SA attribution line | the labeled source itself |
//! | `farm.demo.test` | a content farm: `/articles/<slug>.html` copies the paragraphs of six articles, wrapped in ad paragraphs and a date line, **without attribution** (that is what ditto exists to find); `/about.html` is original text | a bad neighborhood `farm.demo.test/articles/`, each page's source articles |
//! | `mirror.demo.test` | byte-for-byte mirror of the farm | the same neighborhood again; exact replicas of the farm |
//! | `near.demo.test` | near-replica of the farm: another date line, another ad paragraph, a few words changed in one paragraph per page | bad neighborhood; near-replicas of the farm pages |
//! | `blog.demo.test` | original prose (written for ditto, not copied), quoting one Wikipedia paragraph once, with credit; `/links.html` links every demo host; robots.txt disallows `/private/`, which the index links to | a clean site; `/private/` never fetched |
//! | `trap.demo.test` | an endless calendar `/cal/YYYY/MM` (each month links the next and previous), a query calendar `/events?month=YYYY-MM`, and a repeated-path trap `/a/` → `/a/a/` → … | traps avoided and counted |
//! | `busy.demo.test` | original pages that answer `429` with `Retry-After: 1` to the first 2 requests each, then `200` | backoffs honored |
//!
//! Every host serves a robots.txt. Crawling from [`demo_seeds`] (`http://wiki.demo.test/` and
//! `http://blog.demo.test/`) reaches every host.

use std::sync::OnceLock;

use super::{escape, page, Resource, RetryAfter, Site, WebSpec};

/// The demo web's host suffix: resolve `*.demo.test` to the server.
pub const DEMO_SUFFIX: &str = "demo.test";

/// Every host of [`demo_web`].
pub const DEMO_HOSTS: &[&str] = &[
    "wiki.demo.test",
    "farm.demo.test",
    "mirror.demo.test",
    "near.demo.test",
    "blog.demo.test",
    "trap.demo.test",
    "busy.demo.test",
];

/// The bundled sample: (title, HTML) of each article, as copied from the shared corpus.
/// Wikipedia text, CC BY-SA 3.0 — see `demo/wikipedia/ATTRIBUTION.md`.
static ARTICLES: [(&str, &str); 10] = [
    ("Aardwolf", include_str!("../../demo/wikipedia/Aardwolf.html")),
    ("Albedo", include_str!("../../demo/wikipedia/Albedo.html")),
    ("Amateur astronomy", include_str!("../../demo/wikipedia/Amateur_astronomy.html")),
    ("An American in Paris", include_str!("../../demo/wikipedia/An_American_in_Paris.html")),
    ("Android (robot)", include_str!("../../demo/wikipedia/Android_(robot).html")),
    ("Assistive technology", include_str!("../../demo/wikipedia/Assistive_technology.html")),
    ("Austroasiatic languages", include_str!("../../demo/wikipedia/Austroasiatic_languages.html")),
    ("Phonation", include_str!("../../demo/wikipedia/Phonation.html")),
    ("Piedmont", include_str!("../../demo/wikipedia/Piedmont.html")),
    ("Plankton", include_str!("../../demo/wikipedia/Plankton.html")),
];

/// Revision ids of [`ARTICLES`], same order (from shared/data/wikipedia/stats.json).
const REVISIONS: [u64; 10] = [
    715569164, 715952044, 712482024, 717764186, 717567319, 714986429, 714445405, 557498119, 557999843,
    557429702,
];

/// Articles the farm copies (indices into [`ARTICLES`]).
const FARMED: [usize; 6] = [0, 1, 2, 7, 8, 9];

/// Paragraphs the farm copies from each article.
const FARM_PARAGRAPHS: usize = 10;

/// The bundled Wikipedia sample as (title, HTML), for building the demo's label set from
/// exactly the text the demo web serves.
pub fn demo_articles() -> &'static [(&'static str, &'static str)] {
    &ARTICLES
}

/// Where `ditto demo` starts crawling.
pub fn demo_seeds() -> Vec<String> {
    vec!["http://wiki.demo.test/".to_string(), "http://blog.demo.test/".to_string()]
}

/// The web `ditto demo` crawls (hosts in the module docs). Built once and cloned: the
/// article pages are a few hundred KB of string work.
pub fn demo_web() -> WebSpec {
    static WEB: OnceLock<WebSpec> = OnceLock::new();
    WEB.get_or_init(build_demo_web).clone()
}

fn build_demo_web() -> WebSpec {
    let farm = farm_site(false);
    WebSpec::default()
        .host("wiki.demo.test", wiki_site())
        .host("mirror.demo.test", farm.clone())
        .host("farm.demo.test", farm)
        .host("near.demo.test", farm_site(true))
        .host("blog.demo.test", blog_site())
        .host("trap.demo.test", trap_site())
        .host("busy.demo.test", busy_site())
}

/// `/wiki/Title_with_underscores`.
fn wiki_path(title: &str) -> String {
    format!("/wiki/{}", title.replace(' ', "_"))
}

/// `lower-case-with-dashes`.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Decodes `%XX` escapes (bundled link targets use them for `(`, `?`, `&`, non-ASCII).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok().and_then(|h| u8::from_str_radix(h, 16).ok()));
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

const WIKI_PREFIX: &str = "<a href=\"https://en.wikipedia.org/wiki/";

/// Rewrites the bundle's links to Wikipedia: to `/wiki/…` on the demo's own wiki when the
/// target is bundled (and `local` is set), otherwise to their bare text. The text of the
/// page — what chunks are made of — is unchanged, and no link leaves the demo web.
fn rewrite_links(html: &str, local: bool) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find(WIKI_PREFIX) {
        out.push_str(&rest[..start]);
        let after = &rest[start + WIKI_PREFIX.len()..];
        let parsed = after.find('"').and_then(|q| {
            let target = &after[..q];
            let open_end = after[q..].find('>')? + q + 1;
            let close = after[open_end..].find("</a>")? + open_end;
            Some((target, &after[open_end..close], close + "</a>".len()))
        });
        let Some((target, text, consumed)) = parsed else {
            // Malformed: keep the rest as it is.
            out.push_str(&rest[start..]);
            return out;
        };
        let title = percent_decode(target).replace('_', " ");
        if local && ARTICLES.iter().any(|(t, _)| *t == title) {
            out.push_str(&format!("<a href=\"{}\">{}</a>", wiki_path(&title), text));
        } else {
            out.push_str(text);
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

/// The `<p>` blocks of an article (one per line in the bundle), links removed.
fn paragraphs(html: &str) -> Vec<String> {
    html.lines().map(str::trim).filter(|l| l.starts_with("<p>")).map(|l| rewrite_links(l, false)).collect()
}

fn attribution_line(title: &str, revision: u64) -> String {
    // Source and license as text, not links: a demo crawl must never leave loopback.
    let url = format!("https://en.wikipedia.org/wiki/{}", title.replace(' ', "_"));
    format!(
        "<p class=\"attribution\"><small>Text from the Wikipedia article \u{201c}{t}\u{201d} \
         ({url}, revision {revision}) by Wikipedia contributors, licensed CC BY-SA 3.0 \
         (https://creativecommons.org/licenses/by-sa/3.0/); adapted: markup removed, links \
         made local.</small></p>",
        t = escape(title),
    )
}

fn wiki_site() -> Site {
    let mut site = Site::with_robots("User-agent: *\nAllow: /\n");
    let mut index = String::from(
        "<h1>Demo Wiki</h1>\n<p>A small sample of Wikipedia articles, served on loopback for \
         ditto's demo. Each page carries its attribution.</p>\n<ul>\n",
    );
    for (i, (title, html)) in ARTICLES.iter().enumerate() {
        let body = rewrite_links(html, true);
        let line = attribution_line(title, REVISIONS[i]);
        // The attribution goes right under the article's heading, visible at the top.
        let body = match body.find("</h1>") {
            Some(end) => {
                let at = end + "</h1>".len();
                format!("{}\n{}{}", &body[..at], line, &body[at..])
            }
            None => format!("{line}\n{body}"),
        };
        site.pages.insert(wiki_path(title), Resource::html(body));
        index.push_str(&format!("<li><a href=\"{}\">{}</a></li>\n", wiki_path(title), escape(title)));
    }
    index.push_str(
        "</ul>\n<p>Wikipedia text is by Wikipedia contributors, CC BY-SA 3.0; see each page.</p>\n\
         <p>Elsewhere in this demo: <a href=\"http://blog.demo.test/\">a blog</a>.</p>",
    );
    site.pages.insert("/".into(), Resource::html(page("Demo Wiki", &index)));
    site
}

const FARM_ADS: [&str; 4] = [
    "SPONSORED: Earn up to five hundred dollars a day from home with this one simple trick that \
     financial advisers do not want you to know about. Click now, places are limited!",
    "ADVERTISEMENT: Best deals on discount travel insurance, cheap flights and luxury hotel rooms, \
     compared for you in seconds. Book today and save big on your next holiday getaway.",
    "PROMOTED: Doctors are amazed by this weird fruit that melts belly fat overnight. Order a free \
     trial bottle while supplies last; shipping is only a small handling fee.",
    "ADVERTISEMENT: Refinance your mortgage at the lowest rates in years. Homeowners in your area \
     are saving thousands every month; check your eligibility in under two minutes.",
];

/// Small word swaps for the near-replica's one edited paragraph per page.
const NEAR_EDITS: [(&str, &str); 3] = [(" the ", " this "), (" and ", " as well as "), (" is ", " was ")];

/// The farm (`near == false`, served by farm and mirror) or its near-replica.
fn farm_site(near: bool) -> Site {
    let mut site = Site::with_robots("User-agent: *\nDisallow:\n");
    let name = if near { "Knowledge Hub Daily" } else { "Knowledge Hub" };
    let mut index = format!("<h1>{name}</h1>\n<p>Fresh articles every day!</p>\n<ul>\n");
    for (n, &i) in FARMED.iter().enumerate() {
        let (title, html) = ARTICLES[i];
        let path = format!("/articles/{}.html", slug(title));
        let mut copied = paragraphs(html);
        copied.truncate(FARM_PARAGRAPHS);
        if near {
            // A few words changed in one paragraph.
            if let Some(p) = copied.get_mut(1) {
                for (from, to) in NEAR_EDITS {
                    *p = p.replacen(from, to, 1);
                }
            }
        }
        let date = if near {
            format!("<p class=\"date\">Updated on April {}, 2024 by editor</p>", n + 3)
        } else {
            format!("<p class=\"date\">Posted on March {}, 2024 by admin</p>", n + 1)
        };
        let middle_ad = if near { FARM_ADS[3] } else { FARM_ADS[1] };
        let mut body = format!(
            "<h1>{t}: Everything You Need To Know</h1>\n{date}\n<p class=\"ad\">{}</p>\n",
            FARM_ADS[0],
            t = escape(title)
        );
        for (k, p) in copied.iter().enumerate() {
            body.push_str(p);
            body.push('\n');
            if k == 3 {
                body.push_str(&format!("<p class=\"ad\">{middle_ad}</p>\n"));
            }
        }
        body.push_str(&format!(
            "<p class=\"ad\">{}</p>\n<p><a href=\"/\">Home</a> | <a href=\"/about.html\">About us</a></p>",
            FARM_ADS[2]
        ));
        site.pages.insert(path.clone(), Resource::html(page(&format!("{title} | {name}"), &body)));
        index.push_str(&format!("<li><a href=\"{path}\">{}</a></li>\n", escape(title)));
    }
    index.push_str("</ul>\n<p><a href=\"/about.html\">About us</a></p>");
    site.pages.insert("/".into(), Resource::html(page(name, &index)));
    site.pages.insert(
        "/about.html".into(),
        Resource::html(page(
            &format!("About {name}"),
            "<h1>About us</h1>\n\
             <p>We are a small team of enthusiasts who believe that knowledge should be easy to \
             find. Every day our editors pick the most interesting topics and present them in a \
             clean, fast layout that works on every phone.</p>\n\
             <p>Advertising keeps this site free for our readers. If you would like to advertise \
             with us, write to the sales desk and mention the page you saw us on.</p>\n\
             <p><a href=\"/\">Home</a></p>",
        )),
    );
    site
}

/// The Albedo paragraph the blog quotes, exactly as the article has it (links removed).
fn quoted_paragraph() -> String {
    let albedo = ARTICLES.iter().find(|(t, _)| *t == "Albedo").map_or("", |(_, h)| *h);
    paragraphs(albedo).into_iter().find(|p| p.contains("fresh snow")).unwrap_or_default()
}

fn blog_site() -> Site {
    let mut site = Site::with_robots("User-agent: *\nDisallow: /private/\n");
    site.pages.insert(
        "/".into(),
        Resource::html(page(
            "Notes from the Allotment",
            "<h1>Notes from the Allotment</h1>\n\
             <p>This is a small notebook kept by someone who grows more beans than anyone can \
             eat and walks to the plot by the river most mornings. Nothing here is copied from \
             anywhere; it is just what the weather and the garden suggested that week.</p>\n\
             <ul>\n\
             <li><a href=\"/posts/first-frost.html\">The first frost</a></li>\n\
             <li><a href=\"/posts/bright-snow.html\">Why the snow is so bright</a></li>\n\
             <li><a href=\"/posts/seed-swap.html\">The seed swap</a></li>\n\
             <li><a href=\"/links.html\">Sites I keep an eye on</a></li>\n\
             <li><a href=\"/private/drafts.html\">Drafts (not for crawlers)</a></li>\n\
             </ul>",
        )),
    );
    site.pages.insert(
        "/posts/first-frost.html".into(),
        Resource::html(page(
            "The first frost",
            "<h1>The first frost</h1>\n\
             <p>The first frost came on a Tuesday, a week earlier than the old calendar on the \
             shed door promised. The nasturtiums collapsed overnight into something like wet \
             paper, and the courgette leaves went the colour of weak tea by lunchtime.</p>\n\
             <p>The leeks did not care at all. They stood in their row as stiff as soldiers, \
             rimed white along every edge, and by ten o'clock the sun had taken the rime away \
             and they looked exactly as they had the day before.</p>\n\
             <p>I pulled the last of the green tomatoes and laid them on newspaper in the spare \
             room, where half of them will ripen and the other half will wait politely until \
             I give up and make chutney. That is the usual arrangement.</p>\n\
             <p><a href=\"/\">Back to the notebook</a></p>",
        )),
    );
    let quote = quoted_paragraph();
    site.pages.insert(
        "/posts/bright-snow.html".into(),
        Resource::html(page(
            "Why the snow is so bright",
            &format!(
                "<h1>Why the snow is so bright</h1>\n\
                 <p>After the snow on Sunday the whole plot was too bright to look at without \
                 squinting, far brighter than the grey sky it fell from. My neighbour, who used \
                 to teach physics, said the word for this is albedo, and sent me to look it up. \
                 Wikipedia puts it like this:</p>\n\
                 <blockquote>{quote}</blockquote>\n\
                 <p><small>Quoted from the Wikipedia article \
                 <a href=\"http://wiki.demo.test/wiki/Albedo\">Albedo</a>, by Wikipedia \
                 contributors, CC BY-SA 3.0.</small></p>\n\
                 <p>So the snow throws most of the light straight back, while the dug beds next \
                 to it, dark and wet, swallow nearly all of it. That also explains why the \
                 snow on the beds melted two days before the snow on the path.</p>\n\
                 <p><a href=\"/\">Back to the notebook</a></p>"
            ),
        )),
    );
    site.pages.insert(
        "/posts/seed-swap.html".into(),
        Resource::html(page(
            "The seed swap",
            "<h1>The seed swap</h1>\n\
             <p>Twice a year the allotment society borrows the church hall and everyone brings \
             the seeds they saved. The tables fill with envelopes written in a dozen different \
             hands, most of them labelled with a variety name and a warning, such as climbs \
             everything or the slugs adore it.</p>\n\
             <p>I came home with a purple runner bean that nobody could name, a lettuce said to \
             survive any winter, and a pocketful of marigold seed pressed on me by a woman who \
             insisted they keep the whitefly off the tomatoes. We will see in August.</p>\n\
             <p><a href=\"/\">Back to the notebook</a></p>",
        )),
    );
    site.pages.insert(
        "/links.html".into(),
        Resource::html(page(
            "Sites I keep an eye on",
            "<h1>Sites I keep an eye on</h1>\n\
             <p>Some of these are good, and some of them copy other people's work wholesale. \
             I list them all so the demo crawler can find them.</p>\n\
             <ul>\n\
             <li><a href=\"http://wiki.demo.test/\">The demo wiki</a></li>\n\
             <li><a href=\"http://farm.demo.test/\">Knowledge Hub</a></li>\n\
             <li><a href=\"http://mirror.demo.test/\">A mirror of Knowledge Hub</a></li>\n\
             <li><a href=\"http://near.demo.test/\">Knowledge Hub Daily</a></li>\n\
             <li><a href=\"http://trap.demo.test/\">The events calendar</a></li>\n\
             <li><a href=\"http://busy.demo.test/\">The bus cooperative</a></li>\n\
             </ul>\n<p><a href=\"/\">Back to the notebook</a></p>",
        )),
    );
    site.pages.insert(
        "/private/drafts.html".into(),
        Resource::html(page(
            "Drafts",
            "<h1>Drafts</h1>\n<p>Half-finished notes. The robots.txt of this site asks \
             crawlers to stay out of this folder; a polite crawler never fetches this page.</p>",
        )),
    );
    site
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Longest trap path served; past it the repeated-path trap answers 404 (a bound on memory,
/// far beyond any sane crawler's depth limit).
const MAX_TRAP_PATH: usize = 4096;

/// Parses `YYYY/MM` or `YYYY-MM` into (year, month 1..=12), rejecting silly years.
fn parse_month(s: &str) -> Option<(u32, u32)> {
    let (y, m) = s.split_once(['/', '-'])?;
    let year: u32 = y.parse().ok()?;
    let month: u32 = m.trim_end_matches('/').parse().ok()?;
    ((1..=9999).contains(&year) && (1..=12).contains(&month)).then_some((year, month))
}

fn next_month(year: u32, month: u32) -> (u32, u32) {
    if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    }
}

fn prev_month(year: u32, month: u32) -> (u32, u32) {
    if month == 1 {
        (year.saturating_sub(1).max(1), 12)
    } else {
        (year, month - 1)
    }
}

fn month_page(year: u32, month: u32, link: impl Fn(u32, u32) -> String) -> Resource {
    let (ny, nm) = next_month(year, month);
    let (py, pm) = prev_month(year, month);
    let name = MONTHS[(month - 1) as usize];
    Resource::html(page(
        &format!("Events: {name} {year}"),
        &format!(
            "<h1>Events in {name} {year}</h1>\n<p>No events are planned for this month yet.</p>\n\
             <p><a href=\"{}\">Previous month</a> | <a href=\"{}\">Next month</a></p>",
            link(py, pm),
            link(ny, nm)
        ),
    ))
}

fn trap_site() -> Site {
    let mut site = Site::with_robots("User-agent: *\nDisallow:\n");
    site.pages.insert(
        "/".into(),
        Resource::html(page(
            "Community events",
            "<h1>Community events</h1>\n\
             <p>This host is a crawler trap: every calendar month links to the next one, \
             forever, and the archive folder links to a copy of itself one level deeper.</p>\n\
             <ul>\n\
             <li><a href=\"/cal/2024/01\">Calendar</a></li>\n\
             <li><a href=\"/events?month=2024-01\">Events by month</a></li>\n\
             <li><a href=\"/a/\">Archive</a></li>\n\
             </ul>",
        )),
    );
    site.pages.insert(
        "/cal/".into(),
        Resource::generated(|_host, path| {
            let (year, month) = parse_month(path.strip_prefix("/cal/")?)?;
            Some(month_page(year, month, |y, m| format!("/cal/{y}/{m:02}")))
        }),
    );
    site.pages.insert(
        "/events".into(),
        Resource::generated(|_host, path| {
            let query = path.split_once('?').map_or("", |(_, q)| q);
            let value = query.split('&').find_map(|kv| kv.strip_prefix("month=")).unwrap_or("2024-01");
            let (year, month) = parse_month(value)?;
            Some(month_page(year, month, |y, m| format!("/events?month={y}-{m:02}")))
        }),
    );
    site.pages.insert(
        "/a/".into(),
        Resource::generated(|_host, path| {
            // Only /a/, /a/a/, /a/a/a/ …; anything else is a 404.
            let inner = path.strip_prefix('/')?.strip_suffix('/')?;
            if path.len() > MAX_TRAP_PATH || inner.split('/').any(|seg| seg != "a") {
                return None;
            }
            Some(Resource::html(page(
                "Archive",
                &format!(
                    "<h1>Archive</h1>\n<p>Older posts are in the folder below.</p>\n\
                     <p><a href=\"{path}a/\">Older</a></p>"
                ),
            )))
        }),
    );
    site
}

fn busy_site() -> Site {
    let busy = |page_html: String| {
        Resource::status_then(429, Some(RetryAfter::Seconds(1)), 2, Resource::html(page_html))
    };
    let mut site = Site::with_robots("User-agent: *\nDisallow:\n");
    site.pages.insert(
        "/".into(),
        busy(page(
            "Riverside Bus Cooperative",
            "<h1>Riverside Bus Cooperative</h1>\n\
             <p>We are a members' cooperative running two minibuses between the villages along \
             the river, the market town and the railway station. Our server is small and busy, \
             so it sometimes asks visitors to come back a second later.</p>\n\
             <ul>\n<li><a href=\"/timetable.html\">Timetable</a></li>\n\
             <li><a href=\"/notices.html\">Notices</a></li>\n</ul>",
        )),
    );
    site.pages.insert(
        "/timetable.html".into(),
        busy(page(
            "Timetable",
            "<h1>Timetable</h1>\n\
             <p>On weekdays the first bus leaves the mill bridge at a quarter to seven and \
             reaches the station in time for the commuter train; the last one leaves the \
             station at twenty past six. On Saturdays there are three round trips to the \
             market, and on Sundays the buses rest.</p>\n<p><a href=\"/\">Home</a></p>",
        )),
    );
    site.pages.insert(
        "/notices.html".into(),
        busy(page(
            "Notices",
            "<h1>Notices</h1>\n\
             <p>The annual meeting is in the village hall on the second Thursday of March. \
             Members may bring one guest. We will vote on the new fares and on whether to buy \
             a third, electric, minibus with the grant from the county.</p>\n\
             <p><a href=\"/\">Home</a></p>",
        )),
    );
    site
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_is_complete() {
        assert_eq!(ARTICLES.len(), REVISIONS.len());
        for (title, html) in ARTICLES {
            assert!(html.contains(&format!("<h1>{title}</h1>")), "{title}");
        }
    }

    #[test]
    fn links_stay_inside_the_demo() {
        let web = demo_web();
        for (host, site) in &web.hosts {
            for (path, res) in &site.pages {
                let body = match res {
                    Resource::Html { body, .. } => body.clone(),
                    Resource::Status { then: Some(then), .. } => match then.as_ref() {
                        Resource::Html { body, .. } => body.clone(),
                        _ => continue,
                    },
                    _ => continue,
                };
                let text = String::from_utf8_lossy(&body);
                for (i, _) in text.match_indices("href=\"http") {
                    let target = &text[i + 6..];
                    let end = target.find('"').unwrap_or(target.len());
                    let target = &target[..end];
                    let host_part = target.split('/').nth(2).unwrap_or("");
                    assert!(
                        host_part.ends_with(".demo.test"),
                        "{host}{path} links out of the demo: {target}"
                    );
                }
            }
        }
    }

    #[test]
    fn wiki_pages_carry_attribution() {
        let web = demo_web();
        let wiki = &web.hosts["wiki.demo.test"];
        for (title, _) in ARTICLES {
            let Some(Resource::Html { body, .. }) = wiki.pages.get(&wiki_path(title)) else {
                panic!("no page for {title}");
            };
            let text = String::from_utf8_lossy(body);
            assert!(text.contains("CC BY-SA 3.0"), "{title}");
            assert!(text.contains("https://en.wikipedia.org/wiki/"), "{title}");
        }
    }

    #[test]
    fn blog_quotes_a_real_paragraph() {
        let quote = quoted_paragraph();
        assert!(quote.starts_with("<p>Albedos of typical materials"));
    }

    #[test]
    fn months_and_slugs() {
        assert_eq!(parse_month("2024/01"), Some((2024, 1)));
        assert_eq!(parse_month("2024-13"), None);
        assert_eq!(parse_month("99999999999/1"), None);
        assert_eq!(next_month(2024, 12), (2025, 1));
        assert_eq!(slug("Android (robot)"), "android-robot");
        assert_eq!(percent_decode("C%C3%A9sar_Franck"), "César_Franck");
    }
}
