// A gRPC server of grpc-go for scripts/bench.sh grpc: kv.v1.Store from
// tests/it/servers/grpc/kv.proto, without generated code. A codec that passes bytes through
// stands in for protobuf: Get answers one fixed Item whatever it is asked, and Watch answers
// the count its request names (field 2, a varint; 5 without) of the same Item. The request is
// read, never decoded beyond that field, so the server costs as little as grpc-go allows.
//
//	go run . ADDR     (e.g. 127.0.0.1:18095)
package main

import (
	"context"
	"log"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

// raw passes messages through as bytes, under the name the clients' content type asks for.
type raw struct{}

func (raw) Marshal(v any) ([]byte, error)   { return *v.(*[]byte), nil }
func (raw) Unmarshal(b []byte, v any) error { *v.(*[]byte) = append([]byte(nil), b...); return nil }
func (raw) Name() string                    { return "proto" }

// item is kv.v1.Item{key: "k", value: "v"}, encoded.
var item = []byte{0x0a, 0x01, 'k', 0x12, 0x01, 'v'}

func get(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var in []byte
	if err := dec(&in); err != nil {
		return nil, err
	}
	out := item
	return &out, nil
}

// count reads field 2 (a varint) of a WatchRequest.
func count(b []byte) uint64 {
	for i := 0; i < len(b); {
		tag := b[i]
		i++
		switch tag & 7 {
		case 0:
			var v uint64
			for s := uint(0); i < len(b); s += 7 {
				c := b[i]
				i++
				v |= uint64(c&0x7f) << s
				if c < 0x80 {
					break
				}
			}
			if tag>>3 == 2 {
				return v
			}
		case 2:
			if i >= len(b) {
				return 5
			}
			i += 1 + int(b[i])
		default:
			return 5
		}
	}
	return 5
}

func watch(_ any, s grpc.ServerStream) error {
	var in []byte
	if err := s.RecvMsg(&in); err != nil {
		return err
	}
	out := item
	for n := count(in); n > 0; n-- {
		if err := s.SendMsg(&out); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	encoding.RegisterCodec(raw{})
	l, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	s := grpc.NewServer()
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "kv.v1.Store",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Get", Handler: get}},
		Streams:     []grpc.StreamDesc{{StreamName: "Watch", Handler: watch, ServerStreams: true}},
	}, struct{}{})
	log.Fatal(s.Serve(l))
}
