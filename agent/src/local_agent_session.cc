#include "barrage/agent/local_agent_session.h"
