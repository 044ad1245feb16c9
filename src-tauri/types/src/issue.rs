//! A GitHub issue as the API shows it: the link a session started from keeps, and one
//! open issue of the delivery repository for the "From a GitHub issue" picker.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The issue a session started from (stored on the session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IssueLink {
    /// The issue's web address (`https://github.com/acme/shop/issues/12`).
    pub url: String,
    pub number: i64,
    /// `owner/name` of the repository the issue is in.
    pub repo: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetIssueArgs {
    /// An issue's address, or a number of the delivery repository (as `createSession.issue`).
    pub issue: String,
}

/// One issue (the picker's list: open issues of the delivery repository, pull requests left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IssueSummary {
    pub number: i64,
    pub title: String,
    /// The author's login.
    pub author: String,
    pub labels: Vec<String>,
    pub updated_at: String,
    pub url: String,
}
