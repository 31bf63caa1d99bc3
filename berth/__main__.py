from berth.cli import main

raise SystemExit(main())
