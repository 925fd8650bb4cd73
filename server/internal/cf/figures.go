package cf

import "fmt"

// Figure is one of CF.INFO's fields.
type Figure struct {
	Name  string
	Value int64
}

// Info returns f's CF.INFO fields, in RedisBloom's order. Size is the bytes
// of the tables; Number of buckets is the first sub-filter's, as RedisBloom
// reports it; Bucket size is the size built (see doc.go).
func (f *Filter) Info() [8]Figure {
	if f.rb != nil {
		return f.infoRB()
	}
	p := f.Params()
	return [8]Figure{
		{"Size", int64(f.SizeBytes())},
		{"Number of buckets", int64(f.FirstBuckets())},
		{"Number of filters", int64(f.Filters())},
		{"Number of items inserted", f.Inserted()},
		{"Number of items deleted", f.Deleted()},
		{"Bucket size", int64(p.Bucket())},
		{"Expansion rate", int64(p.Expansion)},
		{"Max iterations", int64(p.MaxIter)},
	}
}

// Debug returns f's CF.DEBUG line: the figures of Info, as RedisBloom
// spells them. RedisBloom prints its counts unsigned here (CF.INFO's are
// signed): a count of items that deletes of false positives took below
// zero shows as 2^64-1.
func (f *Filter) Debug() string {
	p := f.Params()
	items, deletes := uint64(f.Inserted()), uint64(f.Deleted())
	if f.rb != nil {
		in := f.rb.Info()
		p.BucketSize, p.MaxIter, p.Expansion = int(in.BucketSize), int(in.MaxIterations), int(in.Expansion)
		items, deletes = in.Items, in.Deletes
	}
	return fmt.Sprintf("bktsize:%d buckets:%d items:%d deletes:%d filters:%d max_iterations:%d expansion:%d",
		p.Bucket(), f.FirstBuckets(), items, deletes, f.Filters(), p.MaxIter, p.Expansion)
}
