"""What the environment holds, read without judging plugins: installed metadata (read without
waiting), the TileLang and TVM that ``import`` gives, targets, requirement verdicts and advice
that fits how a thing was installed. Imports only :mod:`..core`."""
