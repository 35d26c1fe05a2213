//! `mirror run`: the controller against the cluster of the current kubeconfig; `mirror crd`: the
//! Mirror CRD's manifest (`kubectl apply -f` it first).

use mirror_controller::{Config, crd, run};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::args().nth(1).as_deref() {
        Some("crd") => print!("{}", crd::manifest()),
        Some("run") => {
            let client = kube::Client::try_default().await?;
            tokio::select! {
                biased;
                _ = tokio::signal::ctrl_c() => {}
                () = run(client, Config::default()) => {}
            }
        }
        _ => {
            eprintln!("usage: mirror crd | mirror run");
            std::process::exit(2);
        }
    }
    Ok(())
}
