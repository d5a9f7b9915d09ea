"""Write services of the feedback app; import them from here."""

from feedback.services.submission import FeedbackResult, FeedbackSubmitter, feedback_submit

__all__ = ["FeedbackResult", "FeedbackSubmitter", "feedback_submit"]
