"""One table: its state (seats, taille, stakes, the bank's rotation, the betting order, the
coup at the table), its commands, the defaults a clock plays, and the `Table` aggregate.

A table imports the card game (`domain.game`) and the shared words, never a tournament, an
auction, a dispute or the bots. The state is one set of fields (`base`) worked on by one part
a concept (`seats`, `taille`, `bank_rotation`, `stakes`, `coup_flow`), assembled in `state`.
"""
