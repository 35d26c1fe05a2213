//! A watch's byte stream between the server's watch task and the HTTP response body, counting what
//! the client has not read yet. kube-apiserver's cacher hands each watcher's events to a buffered
//! channel, and the response writer to the client's connection; a client that stops reading (a
//! paused process) fills both, and the cacher closes the watcher it cannot dispatch to
//! (`Forcing watcher close due to unresponsiveness`). `ApiServerConfig::unread_watch_events` sets
//! how many unread events that takes here (simplified: one number for the channel and the socket).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The server's end: sends lines and knows how many the client has not read.
pub struct WatchSender {
    tx: UnboundedSender<Bytes>,
    unread: Arc<AtomicUsize>,
}

/// The response body's end: each line it yields is read.
pub struct WatchReceiver {
    rx: UnboundedReceiver<Bytes>,
    unread: Arc<AtomicUsize>,
}

/// A new stream's two ends.
pub fn watch_stream() -> (WatchSender, WatchReceiver) {
    let (tx, rx) = unbounded_channel();
    let unread = Arc::new(AtomicUsize::new(0));
    (WatchSender { tx, unread: Arc::clone(&unread) }, WatchReceiver { rx, unread })
}

impl WatchSender {
    /// Sends one line; false when the client has gone.
    pub fn send(&self, line: Bytes) -> bool {
        let sent = self.tx.send(line).is_ok();
        if sent {
            self.unread.fetch_add(1, Ordering::Relaxed);
        }
        sent
    }

    /// Lines sent that the client has not read.
    pub fn unread(&self) -> usize {
        self.unread.load(Ordering::Relaxed)
    }

    /// Resolves when the client has gone.
    pub async fn closed(&self) {
        self.tx.closed().await;
    }
}

impl WatchReceiver {
    /// The next line, once the client reads it; `None` when the stream has ended.
    pub async fn recv(&mut self) -> Option<Bytes> {
        let line = self.rx.recv().await?;
        self.unread.fetch_sub(1, Ordering::Relaxed);
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn unread_counts_what_was_sent_and_not_yet_read() {
        let (tx, mut rx) = watch_stream();
        assert!(tx.send(Bytes::from_static(b"a")) && tx.send(Bytes::from_static(b"b")));
        assert_eq!(tx.unread(), 2);
        assert_eq!(rx.recv().await.as_deref(), Some(&b"a"[..]));
        assert_eq!(tx.unread(), 1);
        drop(rx);
        assert!(!tx.send(Bytes::from_static(b"c")), "the client has gone");
        assert_eq!(tx.unread(), 1);
    }
}
