//! gRPC server reflection (the `grpc.reflection.v1` service, and `v1alpha` for older servers;
//! the same messages under two names), sans-IO: the request bodies that ask a server for its
//! services and for the files that define them, and the schema read back from its answers.
//! One `ServerReflectionInfo` call carries several requests (a body of messages) and gets an
//! answer to each. Bounded: at most `MAX_FILES` files and `MAX_SERVICES` services are taken.
//! Must not open sockets: the caller sends the bodies and hands back what came.

use prost::Message;
use prost_reflect::prost_types::{FileDescriptorProto, FileDescriptorSet};

use super::schema::Schema;
use crate::proto::grpc::{messages, prefix};

/// The reflection call's path, in the current version and in the one older servers speak.
pub const V1: &str = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
pub const V1_ALPHA: &str = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

/// The most files and services taken from a server's answers.
pub const MAX_FILES: usize = 10_000;
pub const MAX_SERVICES: usize = 10_000;

/// The reflection service itself, which a listing leaves out.
const REFLECTION: [&str; 2] = [
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// What a request asks (the fields of `ServerReflectionRequest` that spate uses).
#[derive(Clone, PartialEq, Message)]
struct Request {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(string, optional, tag = "4")]
    file_containing_symbol: Option<String>,
    #[prost(string, optional, tag = "7")]
    list_services: Option<String>,
}

/// An answer (`ServerReflectionResponse`), the parts spate reads.
#[derive(Clone, PartialEq, Message)]
struct Response {
    #[prost(message, optional, tag = "4")]
    file_descriptor_response: Option<FileDescriptors>,
    #[prost(message, optional, tag = "6")]
    list_services_response: Option<ServiceList>,
    #[prost(message, optional, tag = "7")]
    error_response: Option<ErrorAnswer>,
}

#[derive(Clone, PartialEq, Message)]
struct FileDescriptors {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct ServiceList {
    #[prost(message, repeated, tag = "1")]
    service: Vec<ServiceName>,
}

#[derive(Clone, PartialEq, Message)]
struct ServiceName {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, Message)]
struct ErrorAnswer {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// A body of requests, each framed as a gRPC message.
fn body(requests: impl IntoIterator<Item = Request>) -> Vec<u8> {
    let mut out = Vec::new();
    for r in requests {
        let m = r.encode_to_vec();
        out.extend_from_slice(&prefix(m.len() as u32));
        out.extend_from_slice(&m);
    }
    out
}

/// The body that asks for the server's services.
pub fn list_services() -> Vec<u8> {
    body([Request {
        host: String::new(),
        file_containing_symbol: None,
        list_services: Some(String::new()),
    }])
}

/// The body that asks for the files defining each of `symbols` (services), with their imports.
pub fn files_for(symbols: &[String]) -> Vec<u8> {
    body(symbols.iter().map(|s| Request {
        host: String::new(),
        file_containing_symbol: Some(s.clone()),
        list_services: None,
    }))
}

/// What a server's answers said.
#[derive(Debug, Default)]
pub struct Answers {
    /// The services listed (the reflection service left out).
    pub services: Vec<String>,
    /// The files sent, each a serialized `FileDescriptorProto`, first of each name kept.
    files: Vec<FileDescriptorProto>,
    /// The first error the server answered, with its code.
    pub error: Option<(i32, String)>,
}

/// Reads the body of a reflection call's response.
pub fn read(body: &[u8]) -> Result<Answers, String> {
    let found = messages(body).map_err(|e| format!("the reflection answer: {e}"))?;
    let mut a = Answers::default();
    for m in found {
        let r =
            Response::decode(m).map_err(|e| format!("the reflection answer is not one: {e}"))?;
        if let Some(list) = r.list_services_response {
            for s in list.service {
                if a.services.len() >= MAX_SERVICES {
                    return Err(format!(
                        "the server lists more than {MAX_SERVICES} services"
                    ));
                }
                if !REFLECTION.contains(&s.name.as_str()) {
                    a.services.push(s.name);
                }
            }
        }
        if let Some(files) = r.file_descriptor_response {
            for bytes in files.file_descriptor_proto {
                let file = FileDescriptorProto::decode(bytes.as_slice()).map_err(|e| {
                    format!("the server sent a file descriptor that is not one: {e}")
                })?;
                if a.files.iter().any(|f| f.name == file.name) {
                    continue;
                }
                if a.files.len() >= MAX_FILES {
                    return Err(format!("the server sent more than {MAX_FILES} files"));
                }
                a.files.push(file);
            }
        }
        if let Some(e) = r.error_response {
            a.error.get_or_insert((e.error_code, e.error_message));
        }
    }
    Ok(a)
}

impl Answers {
    /// The schema the files sent make, once every file they import has come.
    pub fn schema(&self) -> Result<Schema, String> {
        let set = FileDescriptorSet {
            file: self.files.clone(),
        };
        Schema::from_descriptor_set(&set.encode_to_vec(), "the server's descriptors")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::prost_types::{
        DescriptorProto, MethodDescriptorProto, ServiceDescriptorProto,
    };

    /// A file `name` in package `pkg` with one message `M` and, if `service`, a service `S` with
    /// a method `Get` taking and returning `M`.
    fn file(name: &str, pkg: &str, service: bool) -> FileDescriptorProto {
        FileDescriptorProto {
            name: Some(name.into()),
            package: Some(pkg.into()),
            syntax: Some("proto3".into()),
            message_type: vec![DescriptorProto {
                name: Some("M".into()),
                ..Default::default()
            }],
            service: match service {
                true => vec![ServiceDescriptorProto {
                    name: Some("S".into()),
                    method: vec![MethodDescriptorProto {
                        name: Some("Get".into()),
                        input_type: Some(format!(".{pkg}.M")),
                        output_type: Some(format!(".{pkg}.M")),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                false => vec![],
            },
            ..Default::default()
        }
    }

    fn answer(r: Response) -> Vec<u8> {
        let m = r.encode_to_vec();
        [prefix(m.len() as u32).to_vec(), m].concat()
    }

    #[test]
    fn requests_are_the_messages_the_reflection_service_reads() {
        // list_services (field 7) with an empty string; file_containing_symbol (field 4).
        assert_eq!(list_services(), [0, 0, 0, 0, 2, 0x3a, 0]);
        let asked = files_for(&["kv.Store".into()]);
        assert_eq!(&asked[5..], b"\x22\x08kv.Store");
        assert_eq!(
            messages(&files_for(&["a".into(), "b".into()]))
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn answers_give_the_services_and_the_schema() {
        let listed = answer(Response {
            file_descriptor_response: None,
            list_services_response: Some(ServiceList {
                service: ["kv.S", "grpc.reflection.v1alpha.ServerReflection"]
                    .iter()
                    .map(|n| ServiceName { name: (*n).into() })
                    .collect(),
            }),
            error_response: None,
        });
        let a = read(&listed).unwrap();
        assert_eq!(a.services, ["kv.S"], "the reflection service left out");
        let files = answer(Response {
            file_descriptor_response: Some(FileDescriptors {
                file_descriptor_proto: vec![
                    file("kv.proto", "kv", true).encode_to_vec(),
                    file("kv.proto", "kv", true).encode_to_vec(),
                ],
            }),
            list_services_response: None,
            error_response: None,
        });
        let unknown = answer(Response {
            file_descriptor_response: None,
            list_services_response: None,
            error_response: Some(ErrorAnswer {
                error_code: 5,
                error_message: "no such symbol".into(),
            }),
        });
        let a = read(&[files, unknown].concat()).unwrap();
        assert_eq!(a.files.len(), 1, "a file sent twice is taken once");
        assert_eq!(a.error, Some((5, "no such symbol".into())));
        let schema = a.schema().unwrap();
        assert_eq!(schema.method("kv.S/Get").unwrap().path(), "/kv.S/Get");
    }

    /// Answers as grpcio-reflection's own message classes (PyPI's, v1alpha) serialize them, and
    /// requests as they read them back (checked there: `list_services ''`,
    /// `file_containing_symbol kv.Store`).
    #[test]
    fn answers_written_by_grpcio_reflection_are_read() {
        let framed = |hex: &str| {
            let m: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            [prefix(m.len() as u32).to_vec(), m].concat()
        };
        let a = read(&framed("32080a060a046b762e53")).unwrap();
        assert_eq!(a.services, ["kv.S"]);
        let a = read(&framed("3a050805120178")).unwrap();
        assert_eq!(a.error, Some((5, "x".into())));
        // One file: the bytes b"ab" are not a FileDescriptorProto.
        assert!(read(&framed("22040a026162")).is_err());
    }

    #[test]
    fn answers_that_are_not_reflections_are_one_line_each() {
        for bad in [
            vec![0, 0, 0, 0, 9, 1, 2],
            vec![0, 0, 0, 0, 2, 0x22, 0x05],
            answer(Response {
                file_descriptor_response: Some(FileDescriptors {
                    file_descriptor_proto: vec![vec![0xff, 0xff]],
                }),
                list_services_response: None,
                error_response: None,
            }),
        ] {
            let e = read(&bad).unwrap_err();
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        // A file whose import never came makes no schema.
        let mut lonely = file("a.proto", "a", true);
        lonely.dependency = vec!["missing.proto".into()];
        let a = Answers {
            files: vec![lonely],
            ..Answers::default()
        };
        assert!(a.schema().is_err());
    }
}
