//! What each stream slot's receiver is told: its head and payload without padding, and a
//! receiver that has had enough cancels its stream while the connection carries on.

use super::*;

/// What a stream slot's events receiver was told.
#[derive(Debug, Default, PartialEq, Eq)]
struct Told {
    reads: usize,
    head: Option<(u16, Media)>,
    payload: Vec<u8>,
}

impl Events for Told {
    fn read_at(&mut self, _: Tick) {
        self.reads += 1;
    }
    fn head(&mut self, status: u16, media: Media) {
        assert!(self.head.is_none(), "told of two heads");
        self.head = Some((status, media));
    }
    fn data(&mut self, bytes: &[u8]) {
        assert!(self.head.is_some(), "payload before the head");
        self.payload.extend_from_slice(bytes);
    }
}

/// `:status: 404` and `content-type: text/event-stream` (a literal with the static table's name).
fn event_stream_404() -> Vec<u8> {
    let mut block = vec![0x8d, 0x0f, 0x10, 17];
    block.extend_from_slice(b"text/event-stream");
    block
}

#[test]
fn each_slot_is_told_its_head_and_its_payload_without_padding() {
    let server = Script::default()
        .frame(HEADERS, END_HEADERS, 1, &[0x88])
        .frame(HEADERS, END_HEADERS | END_STREAM, 3, &event_stream_404())
        .frame(DATA, 0, 1, b"hel")
        .frame(DATA, PADDED, 1, b"\x02loxx")
        .frame(DATA, END_STREAM, 1, b"!")
        .0;
    for cut in 0..=server.len() {
        let mut c: Conn<Told> = settled_with(2, &[], b"");
        open(&mut c, 0);
        open(&mut c, 1);
        feed(&mut c, &server, &[cut]);
        let r = outcome(&mut c, 0).expect("complete").unwrap();
        assert_eq!((r.status, r.body_bytes), (200, 6));
        let told = std::mem::take(c.events(0));
        assert_eq!(
            (told.head, told.payload.as_slice()),
            (Some((200, Media::Other)), &b"hello!"[..])
        );
        assert_eq!(told.reads, 4, "the head and each DATA frame");
        assert_eq!(c.events(1).head, Some((404, Media::EventStream)));
        assert!(c.events(1).payload.is_empty());
    }
}

/// A receiver that has had enough after `cap` payload bytes.
#[derive(Default)]
struct Capped {
    payload: usize,
}

impl Events for Capped {
    fn data(&mut self, bytes: &[u8]) {
        self.payload += bytes.len();
    }
    fn enough(&self) -> bool {
        self.payload >= 4
    }
}

#[test]
fn a_receiver_that_has_enough_cancels_its_stream_and_the_connection_carries_on() {
    let server = Script::default()
        .frame(HEADERS, END_HEADERS, 1, &[0x88])
        .frame(DATA, 0, 1, b"ab")
        .frame(DATA, 0, 1, b"cd")
        // After the cut: late frames of the cancelled stream are ignored.
        .frame(DATA, 0, 1, b"ef")
        .frame(DATA, END_STREAM, 1, b"gh")
        .0;
    for cut in 0..=server.len() {
        let mut c: Conn<Capped> = settled_with(1, &[], b"");
        open(&mut c, 0);
        c.out.clear();
        feed(&mut c, &server, &[cut]);
        let r = outcome(&mut c, 0).expect("complete at the cap").unwrap();
        assert_eq!((r.status, r.body_bytes), (200, 4), "cut at {cut}");
        assert!(r.keep_alive);
        let sent = frames(&c.out);
        assert!(
            sent.contains(&(RST_STREAM, 0, 1, CANCEL.to_be_bytes().to_vec())),
            "cut at {cut}: {sent:?}"
        );
        assert!(!c.is_ended(), "cut at {cut}");
        assert_eq!(c.ready(), Ready::Yes, "the stream's place is free again");
        // The slot's next stream goes on the same connection.
        open(&mut c, 0);
        feed(&mut c, &ok(3), &[]);
        assert_eq!(outcome(&mut c, 0).unwrap().unwrap().body_bytes, 0);
    }
}

/// A header field as a literal without indexing, its name and value not Huffman-coded.
fn literal(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut b = vec![0x00, name.len() as u8];
    b.extend_from_slice(name);
    b.push(value.len() as u8);
    b.extend_from_slice(value);
    b
}

/// `:status: 200` and gRPC's content type, then `more`.
fn grpc_head(more: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut b = vec![0x88];
    b.extend(literal(b"content-type", b"application/grpc"));
    for (n, v) in more {
        b.extend(literal(n, v));
    }
    b
}

/// A gRPC call's response, its messages split over DATA frames and its status in the trailers
/// (or, Trailers-Only, in its head), is judged the same at every split of the server's bytes.
#[test]
fn a_grpc_call_is_judged_from_its_messages_and_trailers_at_every_split() {
    use crate::proto::grpc::{Call, Verdict, prefix};
    let mut body = prefix(3).to_vec();
    body.extend_from_slice(b"abc");
    body.extend_from_slice(&prefix(0));
    let ok = Script::default()
        .frame(HEADERS, END_HEADERS, 1, &grpc_head(&[]))
        .frame(DATA, 0, 1, &body[..4])
        .frame(DATA, 0, 1, &body[4..])
        .frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            1,
            &literal(b"grpc-status", b"0"),
        )
        .0;
    let not_found = Script::default()
        .frame(HEADERS, END_HEADERS, 1, &grpc_head(&[]))
        .frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            1,
            &[
                literal(b"grpc-status", b"5"),
                literal(b"grpc-message", b"no%20such%20key"),
            ]
            .concat(),
        )
        .0;
    let trailers_only = Script::default()
        .frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            1,
            &grpc_head(&[(b"grpc-status", b"14"), (b"grpc-message", b"down")]),
        )
        .0;
    let no_status = Script::default()
        .frame(HEADERS, END_HEADERS, 1, &grpc_head(&[]))
        .frame(DATA, END_STREAM, 1, &body)
        .0;
    for (server, unary, want) in [
        (&ok, false, Verdict::Ok { messages: 2 }),
        (
            &ok,
            true,
            Verdict::Protocol("a unary call answered with 2 messages, not one".into()),
        ),
        (
            &not_found,
            true,
            Verdict::Status {
                code: 5,
                message: Some("no such key".into()),
            },
        ),
        (
            &trailers_only,
            true,
            Verdict::Status {
                code: 14,
                message: Some("down".into()),
            },
        ),
        (
            &no_status,
            false,
            Verdict::Protocol("a response without grpc-status".into()),
        ),
    ] {
        for cut in 0..=server.len() {
            let mut c: Conn<Call> = settled_with(1, &[], b"");
            open(&mut c, 0);
            feed(&mut c, server, &[cut]);
            assert!(outcome(&mut c, 0).expect("complete").is_ok(), "cut {cut}");
            assert_eq!(c.events(0).verdict(unary), want, "cut {cut}");
        }
    }
}
