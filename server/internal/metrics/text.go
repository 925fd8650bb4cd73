package metrics

import (
	"math"
	"strconv"
	"strings"
)

// The Prometheus text format, version 0.0.4: "# HELP name text", "# TYPE
// name kind", then one "name{labels} value" line a sample.

func appendHeader(b []byte, name, help, kind string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, helpEscaper.Replace(help)...)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, kind...)
	return append(b, '\n')
}

// appendSample writes one sample; labels is "" or a whole {…} set.
func appendSample(b []byte, name, labels string, v float64) []byte {
	b = append(b, name...)
	b = append(b, labels...)
	b = append(b, ' ')
	b = append(b, formatFloat(v)...)
	return append(b, '\n')
}

// appendLabel appends {name="value"}, the value escaped.
func appendLabel(b []byte, name, value string) []byte {
	b = append(b, '{')
	b = append(b, name...)
	b = append(b, `="`...)
	b = append(b, labelEscaper.Replace(value)...)
	return append(b, `"}`...)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// formatFloat writes v as the Prometheus client does: the shortest 'g'
// form, +Inf, -Inf, NaN.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
