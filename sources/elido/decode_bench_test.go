package elido

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodeLinkPage decodes a full page of breakdown/link (1000
// links) into the links the comparison reads: a backfill of 30 days of
// 100k links decodes 3,000 of them day by day.
func BenchmarkDecodeLinkPage(b *testing.B) {
	var page strings.Builder
	page.WriteString(`{"items": [`)
	for i := range linkPageSize {
		if i > 0 {
			page.WriteString(", ")
		}
		fmt.Fprintf(&page, `{"link_id": "lnk_%06d", "clicks": %d}`, i, 1+i%5)
	}
	page.WriteString(`], "next_cursor": "b2Zmc2V0OjEwMDA"}`)
	data := []byte(page.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := decodeBreakdown(data)
		if err != nil {
			b.Fatal(err)
		}
		if links, err := p.links(); err != nil || len(links) != linkPageSize {
			b.Fatal(len(links), err)
		}
	}
}
