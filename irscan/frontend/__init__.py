"""Front ends: IR text -> :mod:`irscan.ir`.  The only floor that knows op names and IR syntax."""
