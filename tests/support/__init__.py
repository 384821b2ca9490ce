"""Helpers shared by the tests: the stack's settings, a movable clock and a small API driver."""
