"""Write services of the feedback app; import them from here."""

from feedback.services.submission import RECORDED_MESSAGE, FeedbackResult, FeedbackSubmitter, feedback_submit

__all__ = ["RECORDED_MESSAGE", "FeedbackResult", "FeedbackSubmitter", "feedback_submit"]
