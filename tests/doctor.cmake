# vmhost doctor (src/core/doctor/doctor.c rules, src/core/doctor/doctor_evidence.c, src/out/doctor_view.c, src/cmd/doctor.c).
vmhost_unit_test(test_doctor)
vmhost_script_test(doctor_fixtures cli/doctor_fixtures.sh "cli;sanitize")
vmhost_script_test(doctor_live live/doctor_live.sh "live" ksm)
vmhost_script_test(doctor_growth_live live/doctor_growth.sh "live")
vmhost_script_test(doctor_growth_writes_live live/doctor_growth_writes.sh "live")
vmhost_script_test(doctor_small_pages_live live/doctor_small_pages.sh "live")
vmhost_script_test(doctor_numa_live live/doctor_numa.sh "live")
vmhost_script_test(doctor_vcpu_live live/doctor_vcpu.sh "live")
vmhost_script_test(doctor_kvm_live live/doctor_kvm.sh "live")
# Skipped (not passed, not failed) only where /dev/kvm is absent.
vmhost_script_test(doctor_smaps_live live/doctor_smaps.sh "live")
vmhost_script_test(doctor_balloon_live live/doctor_balloon.sh "live")
vmhost_script_test(doctor_reclaim_live live/doctor_reclaim.sh "live")
