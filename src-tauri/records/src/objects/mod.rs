//! The bucket a team's `kiln serve --objects s3://bucket/prefix` keeps its objects in
//! (SPEC §21): checkpoints as packs with a manifest per session (`packs`), attachments and
//! delivery artifacts by their content's hash. `.kiln/store.git` is then a cache that
//! `packs::fetch` rebuilds. Endpoint, region and credentials come from the usual AWS
//! variables (`AmazonS3Builder::from_env`); the URL may add the non-secret ones as a query
//! (`?endpoint=http://127.0.0.1:9000&allow_http=true&region=…`), so one process can reach
//! two endpoints. The desktop never opens one.

pub mod files;
pub mod packs;

use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as Key;
use object_store::{ClientConfigKey, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};
use sha2::{Digest, Sha256};

use crate::backing::{shown, Backing};
use kiln_types::error::{ApiError, ErrorCode, Result};

/// The query keys a bucket URL may carry: where and how to reach it, never a secret.
const URL_KEYS: &[&str] = &["endpoint", "region", "allow_http"];

/// An opened bucket and the prefix Kiln's objects live under.
pub struct Bucket {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// The URL as given, for messages (`backing::shown` applied).
    pub url: String,
    /// The endpoint in use, when one was set (else AWS's own).
    pub endpoint: Option<String>,
    /// One upload of a session's manifest at a time (read, add, write).
    pub(crate) uploads: tokio::sync::Mutex<()>,
    /// Said with every failure when the environment gives no key: the credentials were
    /// then asked of the instance's metadata service, which the error is often about.
    no_key: bool,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bucket({})", self.url)
    }
}

/// `OBJECTS_UNAVAILABLE`, saying which bucket and why.
pub fn unavailable(url: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::ObjectsUnavailable, format!("the bucket {} cannot be used: {why}", shown(url)))
}

impl Bucket {
    /// Opens `s3://bucket/prefix` (no request is made: `probe` does that).
    pub fn open(url: &str) -> Result<Bucket> {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let Some(rest) = base.strip_prefix("s3://") else {
            return Err(unavailable(url, "the URL must be s3://bucket/prefix"));
        };
        let (name, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if name.is_empty() {
            return Err(unavailable(url, "the URL names no bucket"));
        }
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(name);
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            if !URL_KEYS.contains(&key.as_ref()) {
                return Err(unavailable(
                    url,
                    format!("`{key}` is not a setting a bucket URL may carry ({})", URL_KEYS.join(", ")),
                ));
            }
            let key: AmazonS3ConfigKey = key.parse().map_err(|e| unavailable(url, e))?;
            builder = builder.with_config(key, value);
        }
        // A bucket that does not answer is said within seconds, not after minutes of retries.
        let retry = RetryConfig { max_retries: 2, retry_timeout: Duration::from_secs(15), ..Default::default() };
        builder = builder.with_retry(retry);
        // Unless the environment says otherwise (set one by one: `with_client_options`
        // would drop what the environment and the URL set, `allow_http` among them).
        for (key, value) in [(ClientConfigKey::ConnectTimeout, "5s"), (ClientConfigKey::Timeout, "120s")] {
            if builder.get_config_value(&AmazonS3ConfigKey::Client(key)).is_none() {
                builder = builder.with_config(AmazonS3ConfigKey::Client(key), value);
            }
        }
        let endpoint = builder.get_config_value(&AmazonS3ConfigKey::Endpoint);
        let no_key = builder.get_config_value(&AmazonS3ConfigKey::AccessKeyId).is_none();
        let store = builder.build().map_err(|e| unavailable(url, e))?;
        Ok(Bucket {
            store: Arc::new(store),
            prefix: prefix.trim_matches('/').to_string(),
            url: shown(url),
            endpoint,
            uploads: tokio::sync::Mutex::new(()),
            no_key,
        })
    }

    /// The bucket's key of `name` under the prefix.
    fn key(&self, name: &str) -> Key {
        if self.prefix.is_empty() {
            Key::from(name)
        } else {
            Key::from(format!("{}/{name}", self.prefix))
        }
    }

    fn failed(&self, doing: &str, e: object_store::Error) -> ApiError {
        // The root cause (a refused connection, a TLS failure) is at the end of the chain.
        let mut text = format!("{doing}: {e}");
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            let said = cause.to_string();
            if !text.contains(&said) {
                text.push_str(&format!(": {said}"));
            }
            source = cause.source();
        }
        if self.no_key {
            text.push_str(
                " (AWS_ACCESS_KEY_ID is not set, so credentials were asked of the instance metadata service)",
            );
        }
        unavailable(&self.url, text)
    }

    pub async fn put(&self, name: &str, bytes: Vec<u8>) -> Result<()> {
        self.store
            .put(&self.key(name), PutPayload::from(bytes))
            .await
            .map_err(|e| self.failed(&format!("writing {name}"), e))?;
        Ok(())
    }

    /// The object's bytes, or `None` when the bucket has no such object.
    pub async fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
        match self.store.get(&self.key(name)).await {
            Ok(got) => {
                let bytes = got.bytes().await.map_err(|e| self.failed(&format!("reading {name}"), e))?;
                Ok(Some(bytes.to_vec()))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed(&format!("reading {name}"), e)),
        }
    }

    pub async fn exists(&self, name: &str) -> Result<bool> {
        match self.store.head(&self.key(name)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.failed(&format!("looking for {name}"), e)),
        }
    }

    pub async fn delete(&self, name: &str) -> Result<()> {
        self.store.delete(&self.key(name)).await.map_err(|e| self.failed(&format!("deleting {name}"), e))
    }

    /// The names (relative to the prefix) of every object under `under`.
    pub async fn list(&self, under: &str) -> Result<Vec<String>> {
        let key = self.key(under);
        let metas: Vec<_> = self.store.list(Some(&key)).try_collect().await.map_err(|e| self.failed("listing", e))?;
        let strip = if self.prefix.is_empty() { String::new() } else { format!("{}/", self.prefix) };
        Ok(metas
            .into_iter()
            .map(|m| m.location.as_ref().strip_prefix(&strip).unwrap_or(m.location.as_ref()).to_string())
            .collect())
    }

    /// Stores `bytes` under `kind/<sha256>` + `suffix` unless the bucket has it already;
    /// returns the name. Same content, same name: nothing is stored twice.
    pub async fn put_addressed(&self, kind: &str, suffix: &str, bytes: Vec<u8>) -> Result<String> {
        let name = format!("{kind}/{}{suffix}", sha256_hex(&bytes));
        if !self.exists(&name).await? {
            self.put(&name, bytes).await?;
        }
        Ok(name)
    }

    /// Whether the bucket answers: one listing of the prefix.
    pub async fn probe(&self) -> Result<()> {
        let key = self.key("");
        let mut listing = self.store.list(Some(&key));
        listing.try_next().await.map_err(|e| self.failed("listing the prefix", e))?;
        Ok(())
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Opens the backing's bucket, if it names one.
pub fn open(backing: &Backing) -> Result<Option<Arc<Bucket>>> {
    backing.objects.as_deref().map(|url| Bucket::open(url).map(Arc::new)).transpose()
}

/// `kiln serve --check`: writes, reads back and deletes a probe object; one line of what
/// it found (bucket, prefix, endpoint, objects under the prefix).
pub async fn check(backing: &Backing) -> Result<String> {
    let Some(bucket) = open(backing)? else {
        return Ok("objects: in .kiln/store.git beside the workspace (no bucket)".into());
    };
    let name = format!("probe/{}", uuid::Uuid::new_v4());
    let written = b"kiln probe".to_vec();
    bucket.put(&name, written.clone()).await?;
    let read = bucket.get(&name).await?;
    bucket.delete(&name).await?;
    if read.as_deref() != Some(written.as_slice()) {
        return Err(unavailable(&bucket.url, "a probe object read back differently from how it was written"));
    }
    let count = bucket.list("").await?.len();
    let endpoint = bucket.endpoint.as_deref().unwrap_or("AWS's own endpoint");
    let prefix = if bucket.prefix.is_empty() { "(none)" } else { bucket.prefix.as_str() };
    Ok(format!(
        "objects: bucket {} reachable at {endpoint}, prefix {prefix}, {count} object{} under it; a probe object was written, read back and deleted",
        bucket.url,
        if count == 1 { "" } else { "s" }
    ))
}
