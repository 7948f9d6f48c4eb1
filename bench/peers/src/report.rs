//! The printed report: one detail table per measurement, then the summary of
//! moat against each anchor with the targets.

use std::time::Duration;

use crate::procfs::Memory;
use crate::stats::{Series, Spread};

/// Cold-start figures of one server.
#[derive(Debug)]
pub struct Cold {
    /// Server name.
    pub server: String,
    /// Spawn → first `tools/list` answer, ms.
    pub list: Spread,
    /// Spawn → first tool answer, ms.
    pub first: Spread,
}

/// Memory of one server.
#[derive(Debug)]
pub struct Mem {
    /// Server name.
    pub server: String,
    /// After start-up (one `tools/list`, 1 s settled).
    pub fresh: Memory,
    /// After all the stdio rounds, 1 s settled (VmHWM: the peak).
    pub after: Memory,
}

#[derive(Debug)]
struct Entry {
    key: &'static str,
    title: &'static str,
    mode: &'static str,
    server: String,
    series: Series,
}

/// Everything measured.
#[derive(Debug)]
pub struct Report {
    header: String,
    /// Cold starts.
    pub cold: Vec<Cold>,
    /// Memory.
    pub mem: Vec<Mem>,
    entries: Vec<Entry>,
    http: Vec<(String, Series, usize)>,
    /// Answer sizes, one per server and scenario.
    pub sizes: Vec<Size>,
}

/// The size of one server's answer to one scenario's request: what a client
/// reads and what a model is shown.
#[derive(Debug)]
pub struct Size {
    /// The scenario's title.
    pub title: &'static str,
    /// The server's name.
    pub server: String,
    /// The whole JSON-RPC answer as sent, bytes.
    pub wire: usize,
    /// The text content blocks, joined, bytes.
    pub text: usize,
    /// `structuredContent` as JSON, bytes (0 when the answer has none).
    pub structured: usize,
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn count(v: f64) -> String {
    let n = v.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn spread_ms(s: Spread) -> String {
    format!("{} [{}–{}]", ms(s.med), ms(s.min), ms(s.max))
}

fn spread_count(s: Spread) -> String {
    format!("{} [{}–{}]", count(s.med), count(s.min), count(s.max))
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

impl Report {
    /// An empty report for this run's settings.
    pub fn new(
        rounds: &usize,
        batch: Duration,
        cold: usize,
        http: Duration,
        conns: usize,
    ) -> Report {
        Report {
            header: format!(
                "{rounds} rounds; stdio batches of {:.1} s per server and mode; {cold} cold starts per server; HTTP {conns} connections, {:.1} s per round. Figures: median [min–max] over the rounds.",
                batch.as_secs_f64(),
                http.as_secs_f64()
            ),
            cold: Vec::new(),
            mem: Vec::new(),
            entries: Vec::new(),
            http: Vec::new(),
            sizes: Vec::new(),
        }
    }

    /// One server's rounds of one scenario and mode.
    pub fn add_series(
        &mut self,
        key: &'static str,
        title: &'static str,
        mode: &'static str,
        server: &str,
        series: Series,
    ) {
        self.entries.push(Entry {
            key,
            title,
            mode,
            server: server.to_owned(),
            series,
        });
    }

    /// One HTTP target's rounds.
    pub fn add_http(&mut self, server: &str, series: Series, errors: usize) {
        self.http.push((server.to_owned(), series, errors));
    }

    fn series(&self, key: &str, mode: &str, server: &str) -> Option<Series> {
        self.entries
            .iter()
            .find(|e| e.key == key && e.mode == mode && e.server == server)
            .map(|e| e.series)
    }

    /// Print everything to stdout.
    pub fn print(&self) {
        println!("\n{}", self.header);
        let mut last = "";
        for e in &self.entries {
            if e.title != last {
                println!("\n### {} (stdio)\n", e.title);
                println!("| mode | server | req/s | p50 ms | p95 ms | p99 ms | requests |");
                println!("|---|---|---:|---:|---:|---:|---:|");
                last = e.title;
            }
            let s = e.series;
            println!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                e.mode,
                e.server,
                spread_count(s.rps),
                spread_ms(s.p50),
                spread_ms(s.p95),
                spread_ms(s.p99),
                count(s.n as f64)
            );
        }
        println!("\n### Cold start (spawn → answer, legacy era: initialize first)\n");
        println!("| server | → first tools/list, ms | → first tool answer, ms |");
        println!("|---|---:|---:|");
        for c in &self.cold {
            println!(
                "| {} | {} | {} |",
                c.server,
                spread_ms(c.list),
                spread_ms(c.first)
            );
        }
        println!("\n### Memory (process tree: moat = broker + every worker), MiB\n");
        println!(
            "| server | processes | RSS idle after start | PSS idle after start | RSS idle after load | peak (Σ VmHWM) |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for m in &self.mem {
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                m.server,
                m.fresh.processes,
                mib(m.fresh.rss_kib),
                mib(m.fresh.pss_kib),
                mib(m.after.rss_kib),
                mib(m.after.hwm_kib)
            );
        }
        println!(
            "\n### HTTP: read_file of a 2 KB file, 2026-07-28 headers, bearer token, at the connection limit\n"
        );
        println!("| server | req/s | p50 ms | p99 ms | errors |");
        println!("|---|---:|---:|---:|---:|");
        for (name, s, errors) in &self.http {
            println!(
                "| {} | {} | {} | {} | {} |",
                name,
                spread_count(s.rps),
                spread_ms(s.p50),
                spread_ms(s.p99),
                errors
            );
        }
        self.print_sizes();
        self.print_summary();
        self.print_against_alts();
    }

    /// The regression guard: every measure of moat beside the same measure of
    /// each `--moat-alt` build, as a ratio oriented so that above 1 is better
    /// for moat (throughput now / then; time, latency and memory then / now).
    fn print_against_alts(&self) {
        let alts: Vec<&str> = self
            .cold
            .iter()
            .map(|c| c.server.as_str())
            .filter(|n| n.starts_with("moat@"))
            .collect();
        // Throughput then / now and p99 now / then, so above 1 is better.
        let series_rows = |what: &str, a: &Series, m: &Series| {
            println!(
                "| {what}, req/s | {} | {} | {:.2}× |",
                count(a.rps.med),
                count(m.rps.med),
                m.rps.med / a.rps.med.max(1e-9)
            );
            println!(
                "| {what}, p99 ms | {} | {} | {:.2}× |",
                ms(a.p99.med),
                ms(m.p99.med),
                a.p99.med / m.p99.med.max(1e-9)
            );
        };
        for alt in alts {
            println!("\n### moat against {alt} (ratio above 1: moat is better)\n");
            println!("| measure | {alt} | moat | ratio |");
            println!("|---|---:|---:|---:|");
            for (what, key, mode) in [
                ("read_file 50 KB, sequential", "read", "sequential"),
                ("read_file 50 KB, 8 in flight", "read", "8 in flight"),
                ("list_directory 100, sequential", "list", "sequential"),
                ("list_directory 100, 8 in flight", "list", "8 in flight"),
                ("git_log 20, sequential", "git", "sequential"),
            ] {
                let (Some(a), Some(m)) =
                    (self.series(key, mode, alt), self.series(key, mode, "moat"))
                else {
                    continue;
                };
                series_rows(what, &a, &m);
            }
            let cold = |name: &str| self.cold.iter().find(|c| c.server == name);
            if let (Some(a), Some(m)) = (cold(alt), cold("moat")) {
                for (what, pick) in [
                    (
                        "cold start → tools/list, ms",
                        (|c: &Cold| c.list) as fn(&Cold) -> Spread,
                    ),
                    ("cold start → first tool answer, ms", |c: &Cold| c.first),
                ] {
                    let (am, mm) = (pick(a).med, pick(m).med);
                    println!(
                        "| {what} | {} | {} | {:.2}× |",
                        ms(am),
                        ms(mm),
                        am / mm.max(1e-9)
                    );
                }
            }
            let mem = |name: &str| self.mem.iter().find(|c| c.server == name);
            if let (Some(a), Some(m)) = (mem(alt), mem("moat")) {
                for (what, am, mm) in [
                    (
                        "RSS idle after start, MiB",
                        a.fresh.rss_kib,
                        m.fresh.rss_kib,
                    ),
                    ("RSS idle after load, MiB", a.after.rss_kib, m.after.rss_kib),
                    ("peak (Σ VmHWM), MiB", a.after.hwm_kib, m.after.hwm_kib),
                ] {
                    println!(
                        "| {what} | {} | {} | {:.2}× |",
                        mib(am),
                        mib(mm),
                        am as f64 / mm.max(1) as f64
                    );
                }
            }
            let http = |name: &str| self.http.iter().find(|h| h.0 == name);
            if let (Some((_, a, _)), Some((_, m, _))) = (http(alt), http("moat")) {
                series_rows("HTTP read_file 2 KB", a, m);
            }
        }
    }

    /// Bytes per answer for the same request, each beside the first
    /// server's (moat's) figure as a ratio of the wire size.
    fn print_sizes(&self) {
        if self.sizes.is_empty() {
            return;
        }
        println!("\n### Answer size (the same request to each server), bytes\n");
        println!(
            "| answer | server | JSON-RPC answer | text | structuredContent | moat ÷ server |"
        );
        println!("|---|---|---:|---:|---:|---:|");
        for s in &self.sizes {
            let moat = self
                .sizes
                .iter()
                .find(|m| m.title == s.title && m.server == "moat")
                .map_or(0, |m| m.wire);
            let ratio = if s.wire == 0 {
                "–".to_owned()
            } else {
                format!("{:.2}×", moat as f64 / s.wire as f64)
            };
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                s.title,
                s.server,
                count(s.wire as f64),
                count(s.text as f64),
                count(s.structured as f64),
                ratio
            );
        }
    }

    fn print_summary(&self) {
        const FS: &str = "server-filesystem";
        const GIT: &str = "mcp-server-git";
        const NULL: &str = "null (floor)";
        println!("\n### Summary: moat against each anchor\n");
        println!("| measure | anchor | anchor | floor (null) | moat | ratio | target | met? |");
        println!("|---|---|---:|---:|---:|---:|---|---|");
        let yes = |b: bool| if b { "yes" } else { "**no**" };
        let rps_row = |what: &str, key: &str, mode: &str, anchor: &str, target: Option<f64>| {
            let (Some(a), Some(m)) = (
                self.series(key, mode, anchor),
                self.series(key, mode, "moat"),
            ) else {
                return;
            };
            let floor = self
                .series(key, mode, NULL)
                .map_or("–".into(), |s| count(s.rps.med));
            let ratio = m.rps.med / a.rps.med.max(1e-9);
            println!(
                "| {what}, req/s | {anchor} | {} | {floor} | {} | {ratio:.2}× | {} | {} |",
                count(a.rps.med),
                spread_count(m.rps),
                target.map_or("–".into(), |t| format!("≥ {t}×")),
                target.map_or("–", |t| yes(ratio >= t)),
            );
        };
        rps_row(
            "read_file 50 KB, sequential",
            "read",
            "sequential",
            FS,
            Some(3.0),
        );
        rps_row(
            "read_file 50 KB, 8 in flight",
            "read",
            "8 in flight",
            FS,
            None,
        );
        rps_row(
            "list_directory 100, sequential",
            "list",
            "sequential",
            FS,
            Some(2.0),
        );
        rps_row(
            "list_directory 100, 8 in flight",
            "list",
            "8 in flight",
            FS,
            None,
        );
        rps_row("git_log 20, sequential", "git", "sequential", GIT, None);
        let lat_row = |what: &str,
                       key: &str,
                       mode: &str,
                       anchor: &str,
                       pick: fn(&Series) -> Spread,
                       target: Option<f64>| {
            let (Some(a), Some(m)) = (
                self.series(key, mode, anchor),
                self.series(key, mode, "moat"),
            ) else {
                return;
            };
            let floor = self
                .series(key, mode, NULL)
                .map_or("–".into(), |s| ms(pick(&s).med));
            let (am, mm) = (pick(&a), pick(&m));
            println!(
                "| {what} | {anchor} | {} ms | {floor} ms | {} ms | {:.2}× | {} | {} |",
                ms(am.med),
                spread_ms(mm),
                am.med / mm.med.max(1e-9),
                target.map_or("–".into(), |t| format!("< {t} ms")),
                target.map_or("–", |t| yes(mm.med < t)),
            );
        };
        lat_row(
            "read_file 50 KB, sequential, p50",
            "read",
            "sequential",
            FS,
            |s| s.p50,
            Some(0.6),
        );
        lat_row(
            "read_file 50 KB, sequential, p99",
            "read",
            "sequential",
            FS,
            |s| s.p99,
            None,
        );
        lat_row(
            "read_file 50 KB, 8 in flight, p99",
            "read",
            "8 in flight",
            FS,
            |s| s.p99,
            None,
        );
        lat_row(
            "list_directory 100, sequential, p50",
            "list",
            "sequential",
            FS,
            |s| s.p50,
            None,
        );
        lat_row(
            "git_log 20, sequential, p50",
            "git",
            "sequential",
            GIT,
            |s| s.p50,
            Some(5.0),
        );
        let cold = |name: &str| self.cold.iter().find(|c| c.server == name);
        if let Some(m) = cold("moat") {
            let floor = cold(NULL).map_or("–".into(), |c| ms(c.list.med));
            for anchor in [FS, GIT] {
                if let Some(a) = cold(anchor) {
                    println!(
                        "| cold start → tools/list | {anchor} | {} ms | {floor} ms | {} ms | {:.1}× | < 25 ms | {} |",
                        ms(a.list.med),
                        spread_ms(m.list),
                        a.list.med / m.list.med.max(1e-9),
                        yes(m.list.med < 25.0)
                    );
                }
            }
            if let Some(a) = cold(FS) {
                println!(
                    "| cold start → first tool answer | {FS} | {} ms | – | {} ms | {:.1}× | – | – |",
                    ms(a.first.med),
                    spread_ms(m.first),
                    a.first.med / m.first.med.max(1e-9),
                );
            }
        }
        let mem = |name: &str| self.mem.iter().find(|c| c.server == name);
        if let Some(m) = mem("moat") {
            for anchor in [FS, GIT] {
                if let Some(a) = mem(anchor) {
                    println!(
                        "| idle RSS after start, MiB ({} processes) | {anchor} | {} | – | {} | {:.2}× | < 30 MiB | {} |",
                        m.fresh.processes,
                        mib(a.fresh.rss_kib),
                        mib(m.fresh.rss_kib),
                        a.fresh.rss_kib as f64 / m.fresh.rss_kib.max(1) as f64,
                        yes(m.fresh.rss_kib < 30 * 1024)
                    );
                }
            }
            for anchor in [FS, GIT] {
                if let Some(a) = mem(anchor) {
                    println!(
                        "| idle RSS after load / peak, MiB | {anchor} | {} / {} | – | {} / {} | {:.2}× | < 30 MiB idle | {} |",
                        mib(a.after.rss_kib),
                        mib(a.after.hwm_kib),
                        mib(m.after.rss_kib),
                        mib(m.after.hwm_kib),
                        a.after.rss_kib as f64 / m.after.rss_kib.max(1) as f64,
                        yes(m.after.rss_kib < 30 * 1024)
                    );
                }
            }
        }
        let http = |name: &str| self.http.iter().find(|h| h.0 == name);
        if let Some((_, m, errors)) = http("moat") {
            let floor = http(NULL).map(|h| h.1);
            println!(
                "| HTTP read_file 2 KB, req/s | – | – | {} | {} | – | – | {} |",
                floor.map_or("–".into(), |f| count(f.rps.med)),
                spread_count(m.rps),
                if *errors == 0 {
                    "0 errors"
                } else {
                    "**errors**"
                }
            );
            println!(
                "| HTTP read_file 2 KB, p99 | – | – | {} ms | {} ms | – | – | – |",
                floor.map_or("–".into(), |f| ms(f.p99.med)),
                spread_ms(m.p99),
            );
        }
    }
}
