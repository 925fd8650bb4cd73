package main

import "strconv"

// The block list is of domain names. Entry i of every run is the same name,
// and different i give different names, so that the groups of a run (the
// entries loaded and kept, the ones loaded and then removed, the ones added
// while it serves and the clean names never listed) are disjoint ranges of i.
var (
	nameWords = []string{
		"free", "prize", "login", "secure", "update", "verify", "account", "bonus", "crypto", "wallet",
		"support", "win", "deal", "cheap", "pharma", "casino", "loan", "gift", "track", "click",
		"promo", "alert", "bank", "cloud", "mail", "shop", "video", "news", "app", "cdn",
	}
	nameTLDs = []string{".com", ".net", ".top", ".xyz", ".info", ".biz", ".ru", ".cn", ".io", ".online"}
)

// domain returns the i-th name. Its unique part is i scrambled by an odd
// multiplier, a bijection of the 40-bit integers, written in base 36 between
// hyphens where no other part can run into it.
func domain(i int) string {
	x := uint64(i)
	id := (x * 0x9E3779B97F4A7C15) & (1<<40 - 1)
	h := id * 0xBF58476D1CE4E5B9 >> 32 // picks the words, so that they vary with the name
	b := make([]byte, 0, 48)
	b = append(b, nameWords[h%uint64(len(nameWords))]...)
	b = append(b, '-')
	b = append(b, nameWords[(h>>8)%uint64(len(nameWords))]...)
	b = append(b, '-')
	b = strconv.AppendUint(b, id, 36)
	b = append(b, nameTLDs[(h>>16)%uint64(len(nameTLDs))]...)
	return string(b)
}

// groups are the index ranges of a run's entries.
type groups struct {
	stable    int // [0, stable): loaded, never removed
	removable int // [stable, stable+removable): loaded, removed while serving, in order
	added     int // next: added while serving, in order
	clean     int // next: never listed
}

func (g groups) stableName(j int) string    { return domain(j) }
func (g groups) removableName(j int) string { return domain(g.stable + j) }
func (g groups) addedName(j int) string     { return domain(g.stable + g.removable + j) }
func (g groups) cleanName(j int) string     { return domain(g.stable + g.removable + g.added + j) }
