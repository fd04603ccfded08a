"""Running untrusted or slow work where it cannot hang the caller: killable processes."""
