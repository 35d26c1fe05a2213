//! Every finalizer, label, annotation, environment-variable and container name the controller writes
//! or reads, spelled exactly as actions-runner-controller spells them (ARC-MODEL §2, ARC's
//! `controllers/actions.github.com/constants.go` and the reconcilers' own constants).
//!
//! Other clusters' tooling (helm chart, dashboards, `kubectl` selectors) matches on these strings, so
//! a typo here is a compatibility bug, not a cosmetic one.

// ---------------------------------------------------------------------------------------------
// API groups
// ---------------------------------------------------------------------------------------------

/// API group of the scale-set CRDs.
pub const SCALESET_GROUP: &str = "actions.github.com";
/// API version of the scale-set CRDs.
pub const SCALESET_VERSION: &str = "v1alpha1";
/// `apiVersion` of the scale-set CRDs, as an ownerReference carries it.
pub const SCALESET_API_VERSION: &str = "actions.github.com/v1alpha1";
/// API group of the legacy (summerwind) CRDs.
pub const LEGACY_GROUP: &str = "actions.summerwind.dev";
/// `apiVersion` of the legacy CRDs.
pub const LEGACY_API_VERSION: &str = "actions.summerwind.dev/v1alpha1";

// ---------------------------------------------------------------------------------------------
// Finalizers
// ---------------------------------------------------------------------------------------------

/// Finalizer the ARS controller puts on its AutoscalingRunnerSet.
pub const AUTOSCALING_RUNNER_SET_FINALIZER: &str = "autoscalingrunnerset.actions.github.com/finalizer";
/// Finalizer the ERS controller puts on its EphemeralRunnerSet.
pub const EPHEMERAL_RUNNER_SET_FINALIZER: &str = "ephemeralrunnerset.actions.github.com/finalizer";
/// Resource-cleanup finalizer of an EphemeralRunner (pod and JIT secret).
pub const EPHEMERAL_RUNNER_FINALIZER: &str = "ephemeralrunner.actions.github.com/finalizer";
/// Registration finalizer of an EphemeralRunner: RemoveRunner must succeed at the service first.
pub const EPHEMERAL_RUNNER_REGISTRATION_FINALIZER: &str =
    "ephemeralrunner.actions.github.com/runner-registration-finalizer";
/// Finalizer the AL controller puts on its AutoscalingListener.
pub const AUTOSCALING_LISTENER_FINALIZER: &str = "autoscalinglistener.actions.github.com/finalizer";
/// Finalizer the helm chart puts on resources it creates for an ARS (SA, Role, RoleBinding, secret).
pub const CLEANUP_PROTECTION_FINALIZER: &str = "actions.github.com/cleanup-protection";
/// Finalizer of the legacy Runner.
pub const RUNNER_FINALIZER: &str = "runner.actions.summerwind.dev";

// ---------------------------------------------------------------------------------------------
// Labels
// ---------------------------------------------------------------------------------------------

/// `app.kubernetes.io/part-of`.
pub const LABEL_PART_OF: &str = "app.kubernetes.io/part-of";
/// Value of [`LABEL_PART_OF`] on everything the scale-set controllers create.
pub const LABEL_VALUE_PART_OF: &str = "gha-runner-scale-set";
/// `app.kubernetes.io/component`.
pub const LABEL_COMPONENT: &str = "app.kubernetes.io/component";
/// [`LABEL_COMPONENT`] value of an EphemeralRunnerSet.
pub const COMPONENT_RUNNER_SET: &str = "runner-set";
/// [`LABEL_COMPONENT`] value of an EphemeralRunner.
pub const COMPONENT_RUNNER: &str = "runner";
/// [`LABEL_COMPONENT`] value of an AutoscalingListener.
pub const COMPONENT_LISTENER: &str = "runner-scale-set-listener";
/// `app.kubernetes.io/version`: an ARS whose value the controller does not accept is left alone, with a
/// `VersionAccepted=False` condition.
pub const LABEL_VERSION: &str = "app.kubernetes.io/version";
/// The scale set's (ARS) name.
pub const LABEL_SCALE_SET_NAME: &str = "actions.github.com/scale-set-name";
/// The scale set's (ARS) namespace.
pub const LABEL_SCALE_SET_NAMESPACE: &str = "actions.github.com/scale-set-namespace";
/// Enterprise parsed from the GitHub config URL.
pub const LABEL_ENTERPRISE: &str = "actions.github.com/enterprise";
/// Organization parsed from the GitHub config URL.
pub const LABEL_ORGANIZATION: &str = "actions.github.com/organization";
/// Repository parsed from the GitHub config URL.
pub const LABEL_REPOSITORY: &str = "actions.github.com/repository";
/// Listener name on the listener's Role and RoleBinding (they live in another namespace).
pub const LABEL_LISTENER_NAME: &str = "auto-scaling-listener-name";
/// Listener namespace on the listener's Role and RoleBinding.
pub const LABEL_LISTENER_NAMESPACE: &str = "auto-scaling-listener-namespace";
/// Marks a runner pod; value [`LABEL_VALUE_TRUE`].
pub const LABEL_EPHEMERAL_RUNNER: &str = "actions-ephemeral-runner";
/// The Kubernetes `ConditionTrue` spelling used as a label value.
pub const LABEL_VALUE_TRUE: &str = "True";
/// Hash of a pod's inputs (informational in scale-set mode; the restart trigger in legacy mode).
pub const LABEL_POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// Hash a parent RunnerReplicaSet puts on its Runners (legacy); excluded from the pod hash.
pub const LABEL_RUNNER_TEMPLATE_HASH: &str = "runner-template-hash";
/// Container-hook pods and secrets carry this label naming their runner.
pub const LABEL_RUNNER_POD: &str = "runner-pod";
/// Well-known node label for the operating system.
pub const LABEL_KUBERNETES_OS: &str = "kubernetes.io/os";

// ---------------------------------------------------------------------------------------------
// Annotations
// ---------------------------------------------------------------------------------------------

/// The scale-set id at the service (no prefix, as ARC writes it).
pub const ANNOTATION_RUNNER_SCALE_SET_ID: &str = "runner-scale-set-id";
/// The runner scale set's name at the service.
pub const ANNOTATION_RUNNER_SCALE_SET_NAME: &str = "actions.github.com/runner-scale-set-name";
/// The runner group's name at the service.
pub const ANNOTATION_RUNNER_GROUP_NAME: &str = "actions.github.com/runner-group-name";
/// Hash of the fields whose change needs more than a metadata patch.
pub const ANNOTATION_INTEGRITY_HASH: &str = "actions.github.com/integrity-hash";
/// `spec.patchID` of the ERS when an EphemeralRunner was created.
pub const ANNOTATION_PATCH_ID: &str = "actions.github.com/patch-id";
/// \[V\] `spec.actionableRevision` of the ERS when an EphemeralRunner was created.
pub const ANNOTATION_ACTIONABLE_REVISION: &str = "actions.github.com/actionable-revision";
/// arcsim (`fixes.delete_removed_runner_first`): the runner id a set is taking away at the service,
/// written on the EphemeralRunner before RemoveRunner. A live runner that carries it is on its way out:
/// its removal is finished (RemoveRunner again, then the delete) before the set counts or scales.
pub const ANNOTATION_REMOVING_RUNNER_ID: &str = "actions.github.com/removing-runner-id";
/// [0.13] hash of the helm values that produced an ARS.
pub const ANNOTATION_VALUES_HASH: &str = "actions.github.com/values-hash";
/// [0.13] hash of the runner spec that produced an ERS.
pub const ANNOTATION_RUNNER_SPEC_HASH: &str = "actions.github.com/runner-spec-hash";
/// Cleanup bookkeeping: the manager RoleBinding to strip of its finalizer.
pub const ANNOTATION_CLEANUP_MANAGER_ROLE_BINDING: &str = "actions.github.com/cleanup-manager-role-binding";
/// Cleanup bookkeeping: the manager Role.
pub const ANNOTATION_CLEANUP_MANAGER_ROLE: &str = "actions.github.com/cleanup-manager-role-name";
/// Cleanup bookkeeping: the kubernetes-mode Role.
pub const ANNOTATION_CLEANUP_KUBERNETES_MODE_ROLE: &str =
    "actions.github.com/cleanup-kubernetes-mode-role-name";
/// Cleanup bookkeeping: the kubernetes-mode RoleBinding.
pub const ANNOTATION_CLEANUP_KUBERNETES_MODE_ROLE_BINDING: &str =
    "actions.github.com/cleanup-kubernetes-mode-role-binding-name";
/// Cleanup bookkeeping: the kubernetes-mode ServiceAccount.
pub const ANNOTATION_CLEANUP_KUBERNETES_MODE_SERVICE_ACCOUNT: &str =
    "actions.github.com/cleanup-kubernetes-mode-service-account-name";
/// Cleanup bookkeeping: the GitHub config secret.
pub const ANNOTATION_CLEANUP_GITHUB_SECRET: &str = "actions.github.com/cleanup-github-secret-name";
/// Cleanup bookkeeping: the no-permission ServiceAccount.
pub const ANNOTATION_CLEANUP_NO_PERMISSION_SERVICE_ACCOUNT: &str =
    "actions.github.com/cleanup-no-permission-service-account-name";

// ---------------------------------------------------------------------------------------------
// Containers, secret keys and environment variables
// ---------------------------------------------------------------------------------------------

/// The runner container every runner pod template must have.
pub const RUNNER_CONTAINER_NAME: &str = "runner";
/// The listener pod's container.
pub const LISTENER_CONTAINER_NAME: &str = "listener";
/// JIT secret key holding the encoded JIT config.
pub const JIT_SECRET_KEY_TOKEN: &str = "jitToken";
/// JIT secret key holding the runner's name at the service.
pub const JIT_SECRET_KEY_RUNNER_NAME: &str = "runnerName";
/// JIT secret key holding the runner's id at the service.
pub const JIT_SECRET_KEY_RUNNER_ID: &str = "runnerId";
/// JIT secret key holding the scale-set id.
pub const JIT_SECRET_KEY_SCALE_SET_ID: &str = "scaleSetId";
/// Listener config secret key (mounted at [`LISTENER_CONFIG_MOUNT_PATH`]).
pub const LISTENER_CONFIG_SECRET_KEY: &str = "config.json";
/// Where the listener pod mounts its config secret.
pub const LISTENER_CONFIG_MOUNT_PATH: &str = "/etc/gha-listener";
/// Env var telling the listener where its config file is.
pub const ENV_LISTENER_CONFIG_PATH: &str = "LISTENER_CONFIG_PATH";
/// Env var carrying the runner's JIT config (from the JIT secret).
pub const ENV_RUNNER_JIT_CONFIG: &str = "ACTIONS_RUNNER_INPUT_JITCONFIG";
/// Env var carrying the extra user agent of the runner.
pub const ENV_RUNNER_EXTRA_USER_AGENT: &str = "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT";
/// Env var asking the runner to exit 7 when its version is deprecated.
pub const ENV_RUNNER_DEPRECATED_EXIT_CODE: &str = "ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE";
/// Env var whose presence on the runner container means container hooks are configured.
pub const ENV_RUNNER_CONTAINER_HOOKS: &str = "ACTIONS_RUNNER_CONTAINER_HOOKS";
/// Proxy env var (and proxy-secret key) for HTTP.
pub const ENV_HTTP_PROXY: &str = "http_proxy";
/// Proxy env var (and proxy-secret key) for HTTPS.
pub const ENV_HTTPS_PROXY: &str = "https_proxy";
/// Proxy env var (and proxy-secret key) for the no-proxy list.
pub const ENV_NO_PROXY: &str = "no_proxy";
/// Legacy runner: the registration token.
pub const ENV_RUNNER_TOKEN: &str = "RUNNER_TOKEN";
/// Legacy runner: the runner's name.
pub const ENV_RUNNER_NAME: &str = "RUNNER_NAME";
/// Legacy runner: the organization to register with.
pub const ENV_RUNNER_ORG: &str = "RUNNER_ORG";
/// Legacy runner: the repository to register with.
pub const ENV_RUNNER_REPO: &str = "RUNNER_REPO";
/// Legacy runner: the enterprise to register with.
pub const ENV_RUNNER_ENTERPRISE: &str = "RUNNER_ENTERPRISE";
/// Legacy runner: comma-separated runner labels.
pub const ENV_RUNNER_LABELS: &str = "RUNNER_LABELS";
/// Legacy runner: the runner group.
pub const ENV_RUNNER_GROUP: &str = "RUNNER_GROUP";
/// Legacy runner: the GitHub base URL.
pub const ENV_GITHUB_URL: &str = "GITHUB_URL";
/// Legacy runner: the work directory.
pub const ENV_RUNNER_WORKDIR: &str = "RUNNER_WORKDIR";
/// Legacy runner: `true` for `--ephemeral`.
pub const ENV_RUNNER_EPHEMERAL: &str = "RUNNER_EPHEMERAL";

// ---------------------------------------------------------------------------------------------
// Reasons
// ---------------------------------------------------------------------------------------------

/// ER status reason when the pod template is rejected as invalid.
pub const REASON_INVALID_POD: &str = "InvalidPod";
/// ER status reason when too many pods failed.
pub const REASON_TOO_MANY_POD_FAILURES: &str = "TooManyPodFailures";
/// ER status reason when the runner exited 7 (deprecated version).
pub const REASON_OUTDATED: &str = "Outdated";
