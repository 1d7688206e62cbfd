"""The dispute of a coup: its commands, the verdict a replay gives (`verdicts`) and the
`Dispute` aggregate. It imports only the domain's shared words; the replay itself runs in
`infra.services.replay`.
"""
