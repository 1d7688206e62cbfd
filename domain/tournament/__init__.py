"""A tournament: its format (`settings`, `formats`, `presets`), its state (`base`, `records`,
`entrants`, assembled in `state`), the steps by concept (`seating`, `balancing`, `stages`,
`prizes`), its commands and the `Tournament` aggregate.

A tournament imports the card game and the table (for the settings of its tables and the
table commands its director sends), never the bots, an auction or a dispute.
"""
