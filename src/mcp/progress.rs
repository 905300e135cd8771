//! Progress for long calls: while blocking work runs, a small task polls its counters and
//! sends `notifications/progress` with the request's token — first after ~150 ms, then at
//! most every 100 ms, only when the count grew (so `progress` strictly increases), and
//! never after [`Reporter::finish`] returns, which the handler awaits before answering.
//! Used by every long call: grep, glob and the symbol tools (the search engine's
//! [`rootgrep_core::walk::Control`]), `directory_tree`, `read_files` and `resources/list`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// What the reporter reads: files examined and matches found so far.
pub trait Counters: Send + Sync + 'static {
    fn examined(&self) -> u64;
    fn found(&self) -> u64;
}

impl Counters for rootgrep_core::walk::Control {
    fn examined(&self) -> u64 {
        self.files_examined()
    }
    fn found(&self) -> u64 {
        self.matches()
    }
}

/// Simple counters for tools that count by hand (e.g. files read).
#[derive(Default)]
pub struct Count {
    pub examined: AtomicU64,
    pub found: AtomicU64,
}

impl Counters for Count {
    fn examined(&self) -> u64 {
        self.examined.load(Ordering::Relaxed)
    }
    fn found(&self) -> u64 {
        self.found.load(Ordering::Relaxed)
    }
}

/// A running progress reporter (inert when the request carried no token).
pub struct Reporter {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Reporter {
    /// Starts reporting for a search if the request asked for progress: `searched 12,345
    /// files, 37 matches` (`noun` names what was found).
    pub fn start(
        ctx: &RequestContext<RoleServer>,
        counters: Arc<dyn Counters>,
        total: Option<u64>,
        noun: &'static str,
    ) -> Reporter {
        Reporter::start_with(ctx, counters, total, move |examined, found| {
            format!(
                "searched {} files, {} {noun}",
                thousands(examined),
                thousands(found)
            )
        })
    }

    /// Starts reporting with the tool's own message, made from the counters' examined and
    /// found values (e.g. `listed 12,345 entries`).
    pub fn start_with(
        ctx: &RequestContext<RoleServer>,
        counters: Arc<dyn Counters>,
        total: Option<u64>,
        describe: impl Fn(u64, u64) -> String + Send + 'static,
    ) -> Reporter {
        let Some(token) = ctx.meta.get_progress_token() else {
            return Reporter {
                stop: None,
                task: None,
            };
        };
        let (stop, mut stopped) = oneshot::channel();
        let peer = ctx.peer.clone();
        let task = tokio::spawn(async move {
            let mut last = 0u64;
            let mut delay = Duration::from_millis(150);
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = tokio::time::sleep(delay) => {}
                }
                delay = Duration::from_millis(100);
                let examined = counters.examined();
                if examined <= last {
                    continue;
                }
                last = examined;
                let message = describe(examined, counters.found());
                send(&peer, token.clone(), examined, total, message).await;
            }
        });
        Reporter {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops reporting; when this returns no further notification will be sent.
    pub async fn finish(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

async fn send(
    peer: &Peer<RoleServer>,
    token: ProgressToken,
    progress: u64,
    total: Option<u64>,
    message: String,
) {
    let mut param = ProgressNotificationParam::new(token, progress as f64).with_message(message);
    if let Some(total) = total {
        param = param.with_total(total as f64);
    }
    if let Err(err) = peer.notify_progress(param).await {
        tracing::debug!("progress notification failed: {err}");
    }
}

/// `12345` → `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_separators() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(12345), "12,345");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}
