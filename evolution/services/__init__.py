"""Evolution verification services.

Pure modules (no ORM): `types`, `text`, `structure`, `quality`, `competitors`, `messages`,
`decision`. Writers: `thresholds` (`thresholds_update`) and `verification`
(`evolution_verify`, `evolution_adopt`, `evolution_should_sample`: cache, log).
"""
