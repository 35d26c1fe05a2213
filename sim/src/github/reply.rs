//! Answers as the real services shape them: Actions service errors are .NET exception bodies
//! (`{"typeName": "...AgentExistsException, ...", "message": ...}`; simplification: only the two
//! fields the Go clients read, not the rest of the .NET wrapper), REST errors are GitHub's
//! `{"message", "documentation_url"}`, and every answer carries an `ActivityId` header.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use http_body_util::Full;
use serde::Serialize;

use super::wire::{ExceptionBody, RestErrorBody};

/// The namespace of the Actions service's exception type names.
const EXCEPTION_NAMESPACE: &str = "GitHub.DistributedTask.WebApi";

/// The `ActivityId` header every answer carries (`http` keeps header names in lower case).
const ACTIVITY_ID: HeaderName = HeaderName::from_static("activityid");

/// An answer before it becomes an `http::Response`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: Option<&'static str>,
    pub body: Bytes,
    pub headers: Vec<(&'static str, String)>,
}

impl Reply {
    /// A JSON answer.
    pub(super) fn json(status: u16, value: &impl Serialize) -> Reply {
        let body = serde_json::to_vec(value).expect("wire types always serialise");
        Reply {
            status,
            content_type: Some("application/json; charset=utf-8"),
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// An answer without a body (204, 202, or a bare 401).
    pub(super) fn empty(status: u16) -> Reply {
        Reply { status, content_type: None, body: Bytes::new(), headers: Vec::new() }
    }

    /// A plain-text answer.
    pub(super) fn text(status: u16, text: impl Into<String>) -> Reply {
        let body = Bytes::from(text.into());
        Reply { status, content_type: Some("text/plain; charset=utf-8"), body, headers: Vec::new() }
    }

    /// An Actions service exception, e.g. `exception(409, "AgentExistsException", "...")`.
    pub(super) fn exception(status: u16, name: &str, message: impl Into<String>) -> Reply {
        let type_name = format!("{EXCEPTION_NAMESPACE}.{name}, {EXCEPTION_NAMESPACE}");
        Reply::json(status, &ExceptionBody { type_name, message: message.into() })
    }

    /// A GitHub REST error.
    pub(super) fn rest_error(status: u16, message: impl Into<String>) -> Reply {
        let documentation_url = "https://docs.github.com/rest/actions/self-hosted-runners".to_string();
        Reply::json(status, &RestErrorBody { message: message.into(), documentation_url })
    }

    /// GitHub's bare 404 (`{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`),
    /// what `POST /actions/runner-registration` answers an expired or unknown registration token
    /// (actions/runner #1748 and #4042 and ARC #1311 quote it).
    pub(super) fn not_found() -> Reply {
        let documentation_url = "https://docs.github.com/rest".to_string();
        Reply::json(404, &RestErrorBody { message: "Not Found".into(), documentation_url })
    }

    /// A 400 for a body or query the service cannot read.
    pub(super) fn bad_request(message: impl Into<String>) -> Reply {
        Reply::exception(400, "InvalidRequestException", message)
    }

    /// Adds a header.
    pub(super) fn with_header(mut self, name: &'static str, value: String) -> Reply {
        self.headers.push((name, value));
        self
    }

    /// The `http::Response`, stamped with `activity_id`.
    pub(super) fn into_response(self, activity_id: &str) -> Response<Full<Bytes>> {
        let valid = "status and headers are valid";
        let length = self.body.len();
        let mut response = Response::new(Full::new(self.body));
        *response.status_mut() = StatusCode::from_u16(self.status).expect(valid);
        let headers = response.headers_mut();
        headers.append(ACTIVITY_ID, HeaderValue::from_str(activity_id).expect(valid));
        if let Some(content_type) = self.content_type {
            headers.append(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        }
        for (name, value) in &self.headers {
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).expect(valid),
                HeaderValue::from_str(value).expect(valid),
            );
        }
        headers.append(header::CONTENT_LENGTH, HeaderValue::from(length));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceptions_carry_the_dotnet_type_name_the_client_matches_on() {
        let reply = Reply::exception(400, "JobStillRunningException", "busy");
        let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(
            body["typeName"],
            "GitHub.DistributedTask.WebApi.JobStillRunningException, GitHub.DistributedTask.WebApi"
        );
        assert_eq!(body["message"], "busy");
        let response = reply.into_response("a-1");
        assert_eq!(response.status(), 400);
        assert_eq!(response.headers()["ActivityId"], "a-1");
    }
}
