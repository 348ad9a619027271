//! The MCP Apps panels' source files for the Worker: its static assets (`[assets]` in wrangler.toml, binding
//! `ASSETS`), where scripts/build.sh puts `apps/panels/` under `/apps/panels/`. Reading them there keeps the
//! panels out of the Worker's bundle; an asset fetch is no subrequest.

use std::rc::Rc;

use async_trait::async_trait;
use worker::{Env, Fetcher};
use zotero_mcp_core::platform::{PanelFiles, PanelFilesError};

/// The binding name in wrangler.toml.
pub const BINDING: &str = "ASSETS";

struct AssetPanelFiles {
    assets: Fetcher,
}

#[async_trait(?Send)]
impl PanelFiles for AssetPanelFiles {
    async fn read(&self, name: &str) -> Result<Option<String>, PanelFilesError> {
        let failed = |e: worker::Error| PanelFilesError(e.to_string());
        // The host part is not looked at: the binding serves this deployment's assets by path.
        let mut response =
            self.assets.fetch(format!("https://assets.invalid/apps/panels/{name}"), None).await.map_err(failed)?;
        match response.status_code() {
            200 => response.text().await.map(Some).map_err(failed),
            404 => Ok(None),
            status => Err(PanelFilesError(format!("the static assets answered HTTP {status} for {name}"))),
        }
    }
}

/// The panels' files, when the deployment binds its static assets.
pub fn bind(env: &Env) -> Option<Rc<dyn PanelFiles>> {
    let assets = env.assets(BINDING).ok()?;
    Some(Rc::new(AssetPanelFiles { assets }))
}
