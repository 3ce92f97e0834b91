module github.com/linkforge/linkforge/client

// The oldest Go it builds with: Links returns an iter.Seq2 (Go 1.23).
go 1.23.0

require github.com/gorilla/websocket v1.5.3
