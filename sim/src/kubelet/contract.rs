//! The contract between the images the kubelet runs and their pod specs: what each process reads
//! from its environment and mounts. These are facts about the images (the actions runner image, the
//! summerwind runner image, the scale-set listener image), not about any controller; a controller
//! that writes pods for them must follow them, and the kubelet reads nothing else.

/// The actions runner image (`ghcr.io/actions/actions-runner`): the base64 JIT config it starts with
/// (`run.sh --jitconfig`), usually from a secret key.
pub const RUNNER_JIT_CONFIG_ENV: &str = "ACTIONS_RUNNER_INPUT_JITCONFIG";
/// The summerwind runner image: the registration token `config.sh` registers with.
pub const RUNNER_TOKEN_ENV: &str = "RUNNER_TOKEN";
/// The summerwind runner image: the runner's name (the pod's name when absent).
pub const RUNNER_NAME_ENV: &str = "RUNNER_NAME";
/// The summerwind runner image: comma-separated extra labels.
pub const RUNNER_LABELS_ENV: &str = "RUNNER_LABELS";
/// The summerwind runner image: the GitHub server `config.sh --url` starts from (`https://github.com/`
/// when absent), followed by one of the three below (`runner/startup.sh`'s `ATTACH`).
pub const RUNNER_GITHUB_URL_ENV: &str = "GITHUB_URL";
/// The summerwind runner image: the organization a runner registers in.
pub const RUNNER_ORG_ENV: &str = "RUNNER_ORG";
/// The summerwind runner image: the repository (`owner/name`) a runner registers in.
pub const RUNNER_REPO_ENV: &str = "RUNNER_REPO";
/// The summerwind runner image: the enterprise a runner registers in (`enterprises/<name>`).
pub const RUNNER_ENTERPRISE_ENV: &str = "RUNNER_ENTERPRISE";
/// The summerwind runner image: `true` for a runner that takes one job and exits.
pub const RUNNER_EPHEMERAL_ENV: &str = "RUNNER_EPHEMERAL";
/// The arc-controller image's listener: the program and subcommand a listener container runs
/// (`/arc-controller listener`). A container with a listener config but another command (ARC's
/// `/ghalistener`) is an image the model cannot run: it idles, and its scale set gets no runners.
pub const LISTENER_PROGRAM: &str = "arc-controller";
/// The subcommand after [`LISTENER_PROGRAM`].
pub const LISTENER_SUBCOMMAND: &str = "listener";
/// The scale-set listener image (`arc-controller listener`): the path of its JSON config file, a file of a
/// mounted secret volume.
pub const LISTENER_CONFIG_PATH_ENV: &str = "LISTENER_CONFIG_PATH";
