//! The server binary as these tests run it: started from a `Command`, its
//! output collected line by line, its address read from the `listening`
//! line, killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// Longest wait for the server to start, answer or exit.
pub const BOUND: Duration = Duration::from_secs(60);

/// A running `platform-server` process and its log.
pub struct Server {
    pub child: Child,
    pub address: String,
    /// The administrator's token it wrote to the data dir.
    #[allow(dead_code)]
    pub token: String,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Runs `command` (the binary, or a shell that execs it) on `data_dir`,
    /// listening on a port the kernel picks, and waits for its address.
    pub fn spawn(command: Command, data_dir: &Path) -> Server {
        Server::start(command, data_dir, false)
    }

    /// As [`Server::spawn`], but its output is no longer read once it
    /// listens: the pipes stay open and fill up, as with a stuck log reader.
    #[allow(dead_code)]
    pub fn spawn_unread(command: Command, data_dir: &Path) -> Server {
        Server::start(command, data_dir, true)
    }

    fn start(mut command: Command, data_dir: &Path, unread: bool) -> Server {
        command
            .args(["--listen", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(data_dir)
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if !command.get_envs().any(|(name, _)| name == "RUST_LOG") {
            command.env("RUST_LOG", "info");
        }
        let mut child = command.spawn().expect("the server binary starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (listening, address) = mpsc::channel();
        for output in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let log = Arc::clone(&log);
            let listening = listening.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(output).lines() {
                    let Ok(line) = line else { return };
                    let line = strip_ansi(&line);
                    if line.contains("listening")
                        && let Some(address) = field(&line, "address")
                    {
                        listening.send(address).ok();
                        if unread {
                            // Holds the pipe open, unread, for the process's life.
                            loop {
                                std::thread::park();
                            }
                        }
                    }
                    log.lock().unwrap().push(line);
                }
            });
        }
        let Ok(address) = address.recv_timeout(BOUND) else {
            child.kill().ok();
            panic!(
                "the server did not log its address: {:?}",
                log.lock().unwrap()
            );
        };
        let token = std::fs::read_to_string(data_dir.join("admin.token"))
            .expect("the server wrote the admin token before listening");
        Server {
            child,
            address,
            token,
            log,
        }
    }
}

impl Server {
    /// Whether a line logged so far contains `text`.
    #[allow(dead_code)]
    pub fn logged(&self, text: &str) -> bool {
        self.log
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.contains(text))
    }
}

/// `GET path` with `token`, on a connection of its own: the whole answer.
#[allow(dead_code)]
pub fn get(address: &str, path: &str, token: &str) -> String {
    send(address, "GET", path, token, "")
}

/// `method path` with `token` and a JSON `body`, on a connection of its
/// own: the whole answer.
#[allow(dead_code)]
pub fn send(address: &str, method: &str, path: &str, token: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of `name=value` in a log line.
fn field(line: &str, name: &str) -> Option<String> {
    line.split_whitespace()
        .find_map(|word| word.strip_prefix(&format!("{name}=")))
        .map(|value| value.trim_matches('"').to_owned())
}
