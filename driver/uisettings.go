package driver

// UISetting is a Request setting that a CLI's interactive UI cannot take
// (see Run.DropUISettings).
type UISetting struct {
	// Set reports that the request has the setting.
	Set bool
	// Feature names it, as Run.Unsupported takes it.
	Feature string
	// Clear removes it from the request the UI's command line is built
	// from (a copy of Run.Req).
	Clear func()
}

// DropUISettings reports, in order, each setting of list that is Set (a
// warning, or under Options.Strict an error: see Run.Unsupported) and
// clears it. It returns the first error, leaving the later settings as
// they are. For Spec.Interactive; it does not block.
func (r *Run) DropUISettings(list ...UISetting) error {
	for _, s := range list {
		if !s.Set {
			continue
		}
		if err := r.Unsupported(s.Feature); err != nil {
			return err
		}
		s.Clear()
	}
	return nil
}
