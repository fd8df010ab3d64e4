"""Expected contents of the shared Hudi tables, derived by hand from the Spark SQL that
wrote them: one data module per test file (``cow``, ``mor``, ``lance``), the rows the
INSERT statements of a table family write (``txns``, ``trips``, ``sample``), and in
``model`` the shape of a case and the checks that run it."""
