"""What the diagnosis app tells the apps built on it, without importing them."""

from django.dispatch import Signal

# Sent by `session_evaluate` inside the transaction that stores the evaluation, so what a receiver
# writes commits or rolls back with it. Arguments: `session` (pk, project_id, session_id and
# verifier_verdict loaded, the verdict as stored now).
session_evaluated = Signal()

# Sent once inside the transaction of every write that changes what the dashboards count of a
# session (its creation or re-post, its evaluation, a vote, a review, a purge batch), so what a
# receiver writes commits or rolls back with it. Argument: `moments`, a list of (project_id,
# datetime) pairs, one per dated thing that changed: a session's created_at (before and after a
# re-post that moves it), a review's created_at. `reporting` turns them into day marks; the sender
# never needs to know.
figures_changed = Signal()

# Sent by `sessions_purge` for each batch of sessions it is about to delete, inside the batch's
# transaction, the sessions locked. Argument: `session_pks`. A receiver returns the pks among them
# that must stay: an app whose rows a person curated (the case library, bad cases) keeps their
# sessions; every other row that cascades from a session goes with it.
sessions_purging = Signal()
