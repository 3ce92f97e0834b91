package certs

import (
	"context"
	"log/slog"
	"maps"
	"slices"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapLogger returns a zap logger (certmagic logs through zap) that writes
// to log, so that the library's records are JSON lines with the server's
// own. certmagic reports every lock and every step at info; those become
// debug, and this package logs the outcomes itself (issued, failed,
// refused) at info and warn.
func zapLogger(log *slog.Logger) *zap.Logger {
	return zap.New(slogCore{h: log.Handler()})
}

type slogCore struct{ h slog.Handler }

func level(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.InfoLevel:
		return slog.LevelDebug
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func (c slogCore) Enabled(l zapcore.Level) bool { return c.h.Enabled(context.Background(), level(l)) }

func (c slogCore) With(fields []zapcore.Field) zapcore.Core {
	return slogCore{h: c.h.WithAttrs(attrs(fields))}
}

func (c slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, level(e.Level), e.Message, 0)
	r.AddAttrs(slog.String("logger", "certmagic."+e.LoggerName))
	r.AddAttrs(attrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

func (c slogCore) Sync() error { return nil }

// attrs turns zap fields into slog attributes, in a stable order.
func attrs(fields []zapcore.Field) []slog.Attr {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	out := make([]slog.Attr, 0, len(enc.Fields))
	for _, k := range slices.Sorted(maps.Keys(enc.Fields)) {
		out = append(out, slog.Any(k, enc.Fields[k]))
	}
	return out
}
