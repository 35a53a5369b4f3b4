"""The text kit every terminal and Markdown view builds on: table fitting, numbers, safe text, change and gate
wording."""
