import { Module } from '@nestjs/common';
import { AdminModule } from '../admin/index.js';
import { AuditTrailController } from './audit-trail.controller.js';
import { ControlPlaneAudit } from './control-plane-audit.js';
import { EventHistory } from './event-history.js';
import { HistoryController } from './history.controller.js';
import { RequestHistory } from './request-history.js';
import { RequestSearch } from './request-search.js';

/**
 * The auditor's context: history of the log, of requests and of control-plane changes, and verification
 * and export of the hash-chained audit trail (admin API; the CLI's `audit` commands call the same).
 */
@Module({
  imports: [AdminModule],
  controllers: [HistoryController, AuditTrailController],
  providers: [EventHistory, RequestHistory, RequestSearch, ControlPlaneAudit],
  exports: [EventHistory, RequestHistory, RequestSearch, ControlPlaneAudit],
})
export class AuditModule {}
