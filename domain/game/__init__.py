"""The card game: cards, hands and the coup, the drawing tables, payouts and commission, the
shoe, the four variants as rule objects, exact odds and the banker's strategies.

It imports only the domain's shared words (`domain.errors`, `domain.limits`), never a table
or a tournament: a rule object reads what it needs of a table through a small protocol
beside it (`DuelTable`, `CoveredTable`, `PayingTable`, `PassingTable`, `SeatView`).
"""
