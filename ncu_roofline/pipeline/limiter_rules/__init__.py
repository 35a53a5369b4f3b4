"""The limiter's rules, one function each, registered by name (registry.py); importing this package registers the
shipped ones. The order they are tried in and each rule's table are in metrics/limiters.toml."""

from . import access, launch, sol, stalls  # noqa: F401  (registers the rules)
from .registry import RULES, Rule, Verdict, rule
from .settings import LimiterSettings, limiter_settings

__all__ = ["RULES", "LimiterSettings", "Rule", "Verdict", "limiter_settings", "rule"]
