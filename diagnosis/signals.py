"""What the diagnosis app tells the apps built on it, without importing them."""

from django.dispatch import Signal

# Sent by `session_evaluate` inside the transaction that stores the evaluation, so what a receiver
# writes commits or rolls back with it. Arguments: `session` (pk, project_id, session_id and
# verifier_verdict loaded, the verdict as stored now).
session_evaluated = Signal()
