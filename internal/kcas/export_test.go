package kcas

// SetHooks installs the test hooks; nil removes them.
func SetHooks(published, beforeDecide func()) {
	testHookPublished, testHookBeforeDecide = published, beforeDecide
}
