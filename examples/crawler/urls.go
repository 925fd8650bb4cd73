package main

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strconv"
)

// The generated URLs look like a crawl's: a few thousand sites, each URL of
// one of a handful of shapes (articles, products, searches, profiles, docs),
// with words, dates and query strings. Each new URL carries a number no other
// URL has, so the generator knows exactly how many distinct URLs it wrote.
var (
	subdomains = []string{"www.", "www.", "www.", "", "blog.", "shop.", "news.", "docs.", "m.", "en."}
	tlds       = []string{".com", ".com", ".com", ".org", ".net", ".io", ".de", ".co.uk", ".fr", ".nl"}
	words      = []string{
		"alpha", "amber", "apple", "arrow", "atlas", "badger", "berry", "birch", "blue", "bolt",
		"cedar", "cloud", "coral", "crane", "delta", "echo", "ember", "falcon", "fern", "forge",
		"frost", "garden", "glass", "harbor", "hazel", "iron", "ivory", "jade", "juniper", "kite",
		"lake", "lemon", "linen", "maple", "marble", "meadow", "mint", "moss", "north", "oak",
		"ocean", "olive", "onyx", "orbit", "pearl", "pine", "pixel", "plum", "quartz", "raven",
		"river", "rocket", "sage", "salt", "silver", "slate", "solar", "spruce", "stone", "storm",
		"summit", "swift", "thistle", "tiger", "timber", "topaz", "tulip", "valley", "velvet", "willow",
	}
	sections = []string{"world", "tech", "science", "sport", "culture", "business", "travel", "food", "health", "opinion"}
	colors   = []string{"black", "white", "red", "blue", "green", "grey"}
	sizes    = []string{"xs", "s", "m", "l", "xl"}
	sorts    = []string{"relevance", "newest", "price-asc", "price-desc"}
)

// numHosts is the number of distinct sites URLs are drawn from.
const numHosts = 5000

// urlGen makes the i-th distinct URL of a seed: the same i gives the same URL,
// so a repeat is the URL of an earlier i made again, and nothing needs to be
// kept. It reuses one PCG, reseeded per URL, and one buffer.
type urlGen struct {
	seed uint64
	pcg  rand.PCG
	rng  *rand.Rand
	buf  []byte
}

func newURLGen(seed uint64) *urlGen {
	g := &urlGen{seed: seed}
	g.rng = rand.New(&g.pcg)
	return g
}

// url returns the i-th distinct URL, valid until the next call. Its unique
// part is id, i scrambled by an odd multiplier, a bijection of the 40-bit
// integers: distinct i < 2^40 give distinct ids, and the id sits where no
// other part of the URL can run into it.
func (g *urlGen) url(i uint64) []byte {
	g.pcg.Seed(g.seed, i)
	r := g.rng
	id := (i * 0x9E3779B97F4A7C15) & (1<<40 - 1)
	w := func() string { return words[r.IntN(len(words))] }

	b := g.buf[:0]
	b = append(b, "https://"...)
	host := r.IntN(numHosts) // each site has one subdomain, name and tld
	b = append(b, subdomains[(host/7)%len(subdomains)]...)
	b = append(b, words[host%len(words)]...)
	b = append(b, words[(host/len(words))%len(words)]...)
	if n := host / (len(words) * len(words)); n > 0 {
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, tlds[(host/3)%len(tlds)]...)
	switch r.IntN(6) {
	case 0, 1: // an article
		b = append(b, '/')
		b = append(b, sections[r.IntN(len(sections))]...)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(2015+r.IntN(11)), 10)
		b = append(b, '/')
		if m := 1 + r.IntN(12); m < 10 {
			b = append(b, '0', byte('0'+m))
		} else {
			b = strconv.AppendInt(b, int64(m), 10)
		}
		b = append(b, '/')
		for range 2 + r.IntN(4) {
			b = append(b, w()...)
			b = append(b, '-')
		}
		b = strconv.AppendUint(b, id, 10)
		b = append(b, ".html"...)
	case 2: // a product page with variant parameters
		b = append(b, "/products/"...)
		b = strconv.AppendUint(b, id, 10)
		b = append(b, "?color="...)
		b = append(b, colors[r.IntN(len(colors))]...)
		b = append(b, "&size="...)
		b = append(b, sizes[r.IntN(len(sizes))]...)
		if r.IntN(3) == 0 {
			b = append(b, "&utm_source=newsletter&utm_medium=email"...)
		}
	case 3: // a results page
		b = append(b, "/search?q="...)
		b = append(b, w()...)
		b = append(b, '+')
		b = append(b, w()...)
		b = append(b, "&sort="...)
		b = append(b, sorts[r.IntN(len(sorts))]...)
		b = append(b, "&start="...)
		b = strconv.AppendUint(b, id, 10)
	case 4: // a profile's post
		b = append(b, "/users/"...)
		b = append(b, w()...)
		b = strconv.AppendInt(b, int64(r.IntN(1000)), 10)
		b = append(b, "/posts/"...)
		b = strconv.AppendUint(b, id, 36)
	default: // documentation
		b = append(b, "/docs/v"...)
		b = strconv.AppendInt(b, int64(1+r.IntN(5)), 10)
		b = append(b, '/')
		b = append(b, w()...)
		b = append(b, '/')
		b = append(b, w()...)
		b = append(b, "/p"...)
		b = strconv.AppendUint(b, id, 36)
		if r.IntN(4) == 0 {
			b = append(b, "#section-"...)
			b = append(b, w()...)
		}
	}
	g.buf = b
	return b
}

// generated is what generate wrote.
type generated struct {
	lines    int // URLs written
	distinct int // of which distinct
	bytes    int64
}

// generate writes n URLs to w, one a line, a fraction repeat of them repeats
// of earlier ones: half of the repeats link to one of the last 1000 URLs (a
// page's neighbours), half to one skewed towards the first URLs (the popular
// pages every site links to). The same seed writes the same file.
func generate(w io.Writer, n int, repeat float64, seed uint64) (generated, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	g := newURLGen(seed)
	rng := rand.New(rand.NewPCG(seed, 0x7265706561))
	var st generated
	for range n {
		var i uint64
		switch {
		case st.distinct == 0 || rng.Float64() >= repeat:
			i = uint64(st.distinct)
			st.distinct++
		case rng.IntN(2) == 0:
			recent := min(st.distinct, 1000)
			i = uint64(st.distinct - 1 - rng.IntN(recent))
		default:
			u := rng.Float64()
			i = uint64(float64(st.distinct) * u * u * u)
		}
		line := append(g.url(i), '\n')
		if _, err := bw.Write(line); err != nil {
			return st, err
		}
		g.buf = line[:0]
		st.lines++
		st.bytes += int64(len(line))
	}
	return st, bw.Flush()
}
