package disruption

// singleNode judges candidates one at a time (the nodes of a unit together), starting where the
// last pass stopped.
func (d *decider) singleNode(eligible []*candidate) error {
	judged := map[*unit]bool{}
	simulated := 0 // candidates this loop simulated
	start := 0
	for i, c := range eligible {
		if c.Name == d.opts.Cursor {
			start = i
			break
		}
	}
	for k := 0; k < len(eligible); k++ {
		c := eligible[(start+k)%len(eligible)]
		if d.world.runs >= d.opts.MaxSimulations || len(d.dec.Commands) >= d.opts.MaxCommands {
			d.dec.Cursor = c.Name
			if d.world.runs >= d.opts.MaxSimulations {
				d.dec.Outcome = OutcomeTruncated
			}
			for _, rest := range eligible[(start+k)%len(eligible):] {
				d.skip(rest, SkipNotReached, "the pass ended before reaching it")
			}
			return nil
		}
		if d.taken[c.Name] || (c.unit != nil && judged[c.unit]) {
			continue
		}
		if d.receiving[c.Name] {
			d.skip(c, SkipReceiving, "it receives pods from another command of this pass")
			continue
		}
		if v, ok := d.recall.lookup(c); ok {
			d.skip(c, v.reason, "%s", v.message)
			continue
		}
		cs := c.whole()
		if c.unit != nil {
			judged[c.unit] = true
			if r, msg := d.unitBlocked(c); r != "" {
				d.skipAll(cs, r, msg)
				continue
			}
		}
		cmd, skip, err := d.evaluate(cs, evalSingle)
		if err != nil {
			return err
		}
		if d.simulated != nil {
			simulated++
		}
		if skip != nil {
			d.recall.remember(c, skip, d.simulated, d.world)
			d.skipAll(cs, skip.Reason, skip.Message)
			if d.simulated != nil && d.simulated.ontoReplacement && simulated > 1 {
				// Its pods would go to a replacement this pass launches, and so, most likely,
				// would those of the candidates after it (the replacement's room is the room
				// the fleet has), each simulation ending the same way: the next pass goes on
				// from here, with the replacements' room to use once they are up. Not when it
				// is the first candidate this loop simulated: a pass always gets past where
				// the last one stopped.
				d.dec.Cursor = c.Name
				for _, rest := range eligible[(start+k)%len(eligible)+1:] {
					d.skip(rest, SkipNotReached, "the pass ended before reaching it")
				}
				return nil
			}
			continue
		}
		if err := d.commit(*cmd); err != nil {
			return err
		}
	}
	d.dec.Cursor = ""
	return nil
}
