//! `zotero_export_link`: feed links (`crate::feeds`) made, listed and revoked. Making one hands read access to
//! part of the library to whoever holds the URL, so it takes the write scope and is asked about like a
//! destructive write; the URL is shown once, when it is made, and only its hash is kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::bibliography::Format;
use zotero_mcp_core::calendar::iso_time;
use zotero_mcp_core::zotero::{ObjectKey, Query, ZoteroClient};

use crate::confirm::Proposal;
use crate::context::RequestContext;
use crate::feed_links::{FeedLink, LinkStore, LinkStoreError, Listed, PREFIX};
use crate::mcp::{Tool, ToolError, ToolSpec};
use crate::tools::saved_searches;

// What `zotero_export_link` does.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum LinkAction {
    #[default]
    Create,
    List,
    Revoke,
}

// The file a feed serves.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FeedFormat {
    #[default]
    Bibtex,
    Biblatex,
    Csljson,
    Ris,
}

impl FeedFormat {
    fn format(self) -> Format {
        match self {
            FeedFormat::Bibtex => Format::BibTex,
            FeedFormat::Biblatex => Format::BibLaTex,
            FeedFormat::Csljson => Format::CslJson,
            FeedFormat::Ris => Format::Ris,
        }
    }
}

/// Arguments of `zotero_export_link`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportLinkInput {
    #[serde(default)]
    pub action: LinkAction,
    #[serde(default)]
    pub format: FeedFormat,
    /// Key or name; none: the whole library.
    #[validate(length(max = 255))]
    pub collection: Option<String>,
    #[serde(default)]
    pub include_subcollections: bool,
    /// Key or name.
    #[validate(length(max = 255))]
    pub saved_search: Option<String>,
    /// None: until revoked.
    #[validate(range(min = 1, max = 3650))]
    pub expires_in_days: Option<u32>,
    #[validate(length(max = 100))]
    pub label: Option<String>,
    /// For revoke.
    #[validate(length(max = 64))]
    pub id: Option<String>,
}

/// One feed link.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinkOut {
    pub id: String,
    pub library: String,
    /// The collection, saved search or library it serves, by name.
    pub serves: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    pub include_subcollections: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_search: Option<String>,
    pub format: FeedFormat,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// Result of `zotero_export_link`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportLinkOutput {
    pub action: LinkAction,
    /// For create: the feed's URL, shown only now (it is the only key to the feed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The link made, the links that exist, or the one revoked.
    pub links: Vec<LinkOut>,
}

pub struct ExportLink;

impl Tool for ExportLink {
    type Input = ExportLinkInput;
    type Output = ExportLinkOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_export_link",
        "Bibliography feed links",
        "A secret, always current URL serving the library, a collection or a saved search as BibTeX, BibLaTeX, \
         CSL-JSON or RIS to Overleaf or Pandoc without sign-in; or lists or revokes them.",
    )
    .changes_only_derived_data()
    .confirms();

    fn render(output: &ExportLinkOutput) -> String {
        render(output)
    }

    /// Making a link is asked about: it opens part of the library to whoever holds the URL.
    fn needs_confirmation(input: &ExportLinkInput) -> bool {
        input.action == LinkAction::Create
    }

    async fn call(ctx: &RequestContext, input: ExportLinkInput) -> Result<ExportLinkOutput, ToolError> {
        let store = LinkStore { kv: ctx.services().platform().oauth_kv.as_ref() };
        let failed = |error: LinkStoreError| ToolError::Failed(error.to_string());
        match input.action {
            LinkAction::List => {
                let links = store.list().await.map_err(failed)?;
                Ok(ExportLinkOutput { action: input.action, url: None, links: links.iter().map(out).collect() })
            }
            LinkAction::Revoke => {
                let id = input.id.as_deref().ok_or_else(|| {
                    ToolError::invalid("revoke needs `id`: the link's id from action \"list\"".to_owned())
                })?;
                let Some(found) = store.revoke(id).await.map_err(failed)? else {
                    return Err(ToolError::Failed(format!(
                        "no feed link has the id {id:?}; action \"list\" shows the ids of those that exist"
                    )));
                };
                Ok(ExportLinkOutput { action: input.action, url: None, links: vec![out(&found)] })
            }
            LinkAction::Create => create(ctx, &store, input).await,
        }
    }
}

async fn create(
    ctx: &RequestContext,
    store: &LinkStore<'_>,
    input: ExportLinkInput,
) -> Result<ExportLinkOutput, ToolError> {
    if input.collection.is_some() && input.saved_search.is_some() {
        return Err(ToolError::invalid("give `collection` or `savedSearch`, not both".to_owned()));
    }
    if input.include_subcollections && input.collection.is_none() {
        return Err(ToolError::invalid("`includeSubcollections` needs a `collection`".to_owned()));
    }
    let zotero = ctx.zotero()?;
    let library = zotero_mcp_core::mirror::library_of(zotero).await.map_err(|e| ToolError::Failed(e.to_string()))?;
    let (collection, saved_search, name) = match (&input.collection, &input.saved_search) {
        (Some(wanted), _) => {
            let (key, name) = find_collection(zotero, wanted).await?;
            (Some(key), None, name)
        }
        (_, Some(wanted)) => {
            let search = saved_searches::find(zotero, wanted).await?;
            (None, Some(search.key.clone()), search.name.clone())
        }
        _ => (None, None, "the whole library".to_owned()),
    };
    let now_ms = ctx.services().clock().now_ms();
    let link = FeedLink {
        library,
        collection,
        subcollections: input.include_subcollections,
        saved_search,
        name,
        format: input.format.format().as_str().to_owned(),
        label: input.label,
        created_ms: now_ms,
        expires_ms: input.expires_in_days.map(|days| now_ms + u64::from(days) * 86_400_000),
    };
    let what = describe(&link);
    let until = link.expires_ms.map_or("until revoked".to_owned(), |ms| format!("until {}", iso_time(ms)));
    ctx.confirm_handout(Proposal::new(format!(
        "Make a secret link that lets anyone who has it read {what} without signing in, {until}."
    )))
    .await?;
    let minted = store.mint(&link).await.map_err(|error| ToolError::Failed(error.to_string()))?;
    let path = format!("{PREFIX}{}.{}", minted.secret, link.extension());
    let url = match ctx.services().origin() {
        Some(origin) => format!("{}{path}", crate::auth::http_util::normalized_origin(origin)),
        None => path,
    };
    let listed = Listed { id: minted.id, link };
    Ok(ExportLinkOutput { action: LinkAction::Create, url: Some(url), links: vec![out(&listed)] })
}

/// The collection `wanted` names: its key, or its name when one collection has it.
async fn find_collection(zotero: &ZoteroClient, wanted: &str) -> Result<(String, String), ToolError> {
    let wanted = wanted.trim();
    if let Ok(key) = ObjectKey::parse(wanted) {
        if let Ok(collection) = zotero.collection(&key).await {
            let name = collection.field("name").unwrap_or(wanted).to_owned();
            return Ok((collection.key, name));
        }
    }
    let all = zotero.collections(&Query::new(), 2000).await?;
    let lower = wanted.to_lowercase();
    let named: Vec<_> =
        all.items.iter().filter(|c| c.field("name").is_some_and(|n| n.trim().to_lowercase() == lower)).collect();
    match named.as_slice() {
        [one] => Ok((one.key.clone(), one.field("name").unwrap_or(wanted).to_owned())),
        [] => Err(ToolError::Failed(format!(
            "no collection is called or keyed {:?}; zotero_list_collections lists them",
            wanted.chars().take(100).collect::<String>()
        ))),
        many => Err(ToolError::Failed(format!(
            "{} collections are called {:?}; give the key instead (zotero_list_collections lists them)",
            many.len(),
            wanted.chars().take(100).collect::<String>()
        ))),
    }
}

fn describe(link: &FeedLink) -> String {
    let scope = match (&link.collection, &link.saved_search) {
        (Some(_), _) if link.subcollections => format!("the collection {:?} with its subcollections", link.name),
        (Some(_), _) => format!("the collection {:?}", link.name),
        (_, Some(_)) => format!("the results of the saved search {:?}", link.name),
        _ => "every item".to_owned(),
    };
    format!("{scope} of {} as {}", link.library, link.format)
}

fn out(listed: &Listed) -> LinkOut {
    let link = &listed.link;
    let format = match link.format() {
        Some(Format::BibLaTex) => FeedFormat::Biblatex,
        Some(Format::CslJson) => FeedFormat::Csljson,
        Some(Format::Ris) => FeedFormat::Ris,
        _ => FeedFormat::Bibtex,
    };
    LinkOut {
        id: listed.id.clone(),
        library: link.library.clone(),
        serves: describe(link),
        collection: link.collection.clone(),
        include_subcollections: link.subcollections,
        saved_search: link.saved_search.clone(),
        format,
        label: link.label.clone(),
        created_at: iso_time(link.created_ms),
        expires_at: link.expires_ms.map(iso_time),
    }
}

fn render(output: &ExportLinkOutput) -> String {
    let lines: Vec<String> = output
        .links
        .iter()
        .map(|link| {
            let label = link.label.as_deref().map(|l| format!(" \"{l}\"")).unwrap_or_default();
            let expires = link.expires_at.as_deref().map(|e| format!(", expires {e}")).unwrap_or_default();
            format!("- {}{label}: {} (made {}{expires})", link.id, link.serves, link.created_at)
        })
        .collect();
    match (output.action, &output.url) {
        (LinkAction::Create, Some(url)) => format!(
            "Feed link made. Its URL is shown only now; anyone who has it can read what it serves:\n\n{url}\n\n{}\n\n\
             In Overleaf: New file, From external URL. Revoke it with action \"revoke\" and its id.",
            lines.join("\n")
        ),
        (LinkAction::Revoke, _) => format!("Revoked; the URL now answers 404:\n{}", lines.join("\n")),
        _ if lines.is_empty() => "No feed links exist.".to_owned(),
        _ => format!("{} feed link(s):\n{}", lines.len(), lines.join("\n")),
    }
}
