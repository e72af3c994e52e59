import sys

from tools.agent_driver.driver.entry import main

sys.exit(main())
