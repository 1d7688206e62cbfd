"""The bank auction: who bids for a table's first bank, and who gets it (its commands and
the `BankAuction` aggregate). It imports only the domain's shared words.
"""
