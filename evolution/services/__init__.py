"""Evolution verification services.

Pure modules (no ORM): `types`, `text`, `structure`, `quality`, `competitors`, `messages`,
`decision`. Writers: `thresholds` (`thresholds_update`) and `verification`
(`verify_evolution`, `evolve`, `should_sample`: cache, log).
"""
