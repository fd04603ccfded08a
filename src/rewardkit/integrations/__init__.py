"""Adapters that plug rewardkit into RL trainers: verl, TRL and OpenRLHF.

Import the one you need (``rewardkit.integrations.verl``, ``.trl``, ``.openrlhf``);
none imports its trainer, so rewardkit installs without any of them. See
the README ("Use with verl", "Use with TRL", "Use with OpenRLHF").
"""

__all__: list[str] = []
