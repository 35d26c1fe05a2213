//! Sending what a reconcile changed: the merge patch of a [`LazyCopy`] to the main resource or to
//! the status subresource (controller-runtime's `client.MergeFrom(original)`), and nothing at all
//! when the mutations changed nothing.

use serde_json::json;

use super::error::Result;
use super::meta::namespace_and_name;
use crate::runtime::api::{ApiResource, KubeApi};
use crate::runtime::lazy_copy::LazyCopy;

/// Sends the main-resource merge patch of `object`, unless its mutations changed nothing.
pub(crate) async fn patch_object<K: ApiResource>(api: &KubeApi, object: &LazyCopy<K>) -> Result<()> {
    let patch = object.merge_patch()?;
    if patch.as_object().is_some_and(serde_json::Map::is_empty) {
        return Ok(());
    }
    let (namespace, name) = namespace_and_name(object.get());
    api.patch_merge::<K>(namespace, name, &patch).await?;
    Ok(())
}

/// Sends the status part of `object`'s merge patch to the status subresource, unless the status did
/// not change.
pub(crate) async fn patch_object_status<K: ApiResource>(api: &KubeApi, object: &LazyCopy<K>) -> Result<()> {
    let patch = object.merge_patch()?;
    let Some(status) = patch.get("status") else { return Ok(()) };
    let (namespace, name) = namespace_and_name(object.get());
    api.patch_merge_status::<K>(namespace, name, &json!({ "status": status })).await?;
    Ok(())
}
